package indexquery_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexquery"
)

func TestQueriesBleve(t *testing.T) { scenario(t, bleveEnv(t)) }

// TestQueriesElasticsearch expects the same ids, counts and order on
// Elasticsearch (CMS_ELASTICSEARCH_URL; skipped without it, failing under CI=true).
func TestQueriesElasticsearch(t *testing.T) { scenario(t, elasticEnv(t)) }

// fixture is the content the scenario indexes.
type fixture struct {
	article, title, rank, related, due int64
	a, b, c, d, gone, child            int64
}

func build(t *testing.T, e *env) fixture {
	t.Helper()
	ctx := context.Background()
	s := e.svc
	en := int64(content.LanguageEnUS)
	var f fixture
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.RootID, APIIdentifier: ptr("article"), Values: []content.ValueInput{vin(content.AttrName, en, "Article")}}})
	if err != nil {
		t.Fatal(err)
	}
	f.article = typ[0]
	_, attrs, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("title"), Values: []content.ValueInput{
			vin(content.AttrDataType, 0, "String"), vin(content.AttrLanguageDependent, 0, true)}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("rank"), Values: []content.ValueInput{vin(content.AttrDataType, 0, "Integer")}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("related"), Values: []content.ValueInput{
			vin(content.AttrDataType, 0, "ObjRef"), vin(content.AttrReferencedTypes, 0, f.article)}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("due"), Values: []content.ValueInput{vin(content.AttrDataType, 0, "DateTime")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.title, f.rank, f.related, f.due = attrs[0], attrs[1], attrs[2], attrs[3]
	create := func(vals ...content.ValueInput) int64 {
		_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: f.article, Values: vals}})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	f.a = create(vin(content.AttrName, en, "Alpha Home"), vin(f.title, en, "Hello world"), vin(f.rank, 0, 3), vin(f.due, 0, "2025-01-01T00:00:00Z"))
	f.b = create(vin(content.AttrName, en, "Beta page"), vin(f.rank, 0, 10), vin(f.related, 0, f.a), vin(f.due, 0, "2025-06-01T12:00:00Z"))
	f.c = create(vin(content.AttrName, en, "Gamma"), vin(f.title, en, "hello there"), vin(f.rank, 0, 1))
	f.d = create(vin(f.rank, 0, 5))
	f.gone = create(vin(content.AttrName, en, "Delta"), vin(f.rank, 0, 7))
	if _, _, err := s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(f.gone)}); err != nil {
		t.Fatal(err)
	}
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(content.AttrName, en, "Spring"), vin(content.AttrBranchParent, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	f.child = child.ID
	if _, err := s.UpdateObjects(ctx, fmt.Sprint(f.child), editor, []content.ObjectInput{{ID: f.b,
		Values: []content.ValueInput{vin(content.AttrName, en, "Beta on spring")}}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func ids(items []indexquery.Item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func scenario(t *testing.T, e *env) {
	ctx := context.Background()
	f := build(t, e)
	version := e.sync(t)
	en := int64(content.LanguageEnUS)
	live := indexquery.Filter{TypeIDs: []int64{f.article}, Deleted: ptr(false)}
	with := func(mod func(*indexquery.Filter)) indexquery.Filter {
		c := live
		mod(&c)
		return c
	}
	byID := []indexquery.SortBy{{Kind: indexquery.SortObjID}}
	search := func(name string, flt indexquery.Filter, sort []indexquery.SortBy, page indexquery.Page, want []int64, wantMore bool) {
		t.Helper()
		res, err := e.q.Search(ctx, indexquery.SearchRequest{Branch: 4, Filter: flt, Sort: sort, Page: page})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := ids(res.Items); !slices.Equal(got, want) || res.More != wantMore {
			t.Errorf("%s: ids %v more %v, want %v more %v", name, got, res.More, want, wantMore)
		}
		if res.Version != version {
			t.Errorf("%s: version %d, want %d", name, res.Version, version)
		}
	}
	val := func(attr, lang int64, op int, v *string) indexquery.ValueFilter {
		return indexquery.ValueFilter{AttrKey: indexquery.AttrKey{Attr: attr, Lang: lang}, Op: op, Value: v}
	}
	vf := func(vs ...indexquery.ValueFilter) indexquery.Filter {
		return with(func(c *indexquery.Filter) { c.Values = vs })
	}
	all := []int64{f.a, f.b, f.c, f.d}
	search("all live", live, byID, indexquery.Page{}, all, false)
	search("deleted", with(func(c *indexquery.Filter) { c.Deleted = ptr(true) }), byID, indexquery.Page{}, []int64{f.gone}, false)
	search("deleted null", with(func(c *indexquery.Filter) { c.Deleted = nil }), byID, indexquery.Page{}, append(slices.Clone(all), f.gone), false)
	search("object ids", with(func(c *indexquery.Filter) { c.ObjectIDs = []int64{f.c, f.a} }), byID, indexquery.Page{}, []int64{f.a, f.c}, false)
	search("modifiedBy", with(func(c *indexquery.Filter) { c.ModifiedBy = ptr("editor") }), byID, indexquery.Page{}, all, false)
	search("modifiedBy other", with(func(c *indexquery.Filter) { c.ModifiedBy = ptr("nobody") }), byID, indexquery.Page{}, []int64{}, false)
	search("modifiedSince future", with(func(c *indexquery.Filter) { c.ModifiedSince = ptr(time.Now().Add(time.Hour)) }), byID, indexquery.Page{}, []int64{}, false)
	search("modifiedSince past", with(func(c *indexquery.Filter) { c.ModifiedSince = ptr(time.Now().Add(-time.Hour)) }), byID, indexquery.Page{}, all, false)
	search("no display name", with(func(c *indexquery.Filter) { c.HasDisplayName = ptr(false) }), byID, indexquery.Page{}, []int64{f.d}, false)
	search("phrase name", with(func(c *indexquery.Filter) { c.SearchPhrase = ptr("alpha") }), nil, indexquery.Page{}, []int64{f.a}, false)
	search("phrase prefix", with(func(c *indexquery.Filter) { c.SearchPhrase = ptr("GAM*") }), nil, indexquery.Page{}, []int64{f.c}, false)
	search("phrase attrs", with(func(c *indexquery.Filter) {
		c.SearchPhrase = ptr("hel*")
		c.QuickSearchKeys = []indexquery.AttrKey{{Attr: f.title, Lang: en}}
	}), byID, indexquery.Page{}, []int64{f.a, f.c}, false)
	search("phrase full text", with(func(c *indexquery.Filter) { c.SearchPhrase = ptr("there"); c.QuickSearchFullText = true }), nil, indexquery.Page{}, []int64{f.c}, false)
	search("phrase id", with(func(c *indexquery.Filter) { c.SearchPhrase = ptr(fmt.Sprint(f.d)) }), nil, indexquery.Page{}, []int64{f.d}, false)
	search("lucene full text", with(func(c *indexquery.Filter) { c.FullText = ptr("hello AND NOT world") }), byID, indexquery.Page{}, []int64{f.c}, false)

	search("rank = 10", vf(val(f.rank, 0, indexquery.OpEqual, ptr("10"))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("rank = 10.0", vf(val(f.rank, 0, indexquery.OpEqual, ptr("10.0"))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("rank != 10", vf(val(f.rank, 0, indexquery.OpNotEqual, ptr("10"))), byID, indexquery.Page{}, []int64{f.a, f.c, f.d}, false)
	search("rank < 3", vf(val(f.rank, 0, indexquery.OpLessThan, ptr("3"))), byID, indexquery.Page{}, []int64{f.c}, false)
	search("rank <= 3", vf(val(f.rank, 0, indexquery.OpLessThanOrEqual, ptr("3"))), byID, indexquery.Page{}, []int64{f.a, f.c}, false)
	search("rank > 3", vf(val(f.rank, 0, indexquery.OpGreaterThan, ptr("3"))), byID, indexquery.Page{}, []int64{f.b, f.d}, false)
	search("rank >= 5", vf(val(f.rank, 0, indexquery.OpGreaterThanOrEqual, ptr("5"))), byID, indexquery.Page{}, []int64{f.b, f.d}, false)
	search("due > March", vf(val(f.due, 0, indexquery.OpGreaterThan, ptr("2025-03-01T00:00:00.0000000Z"))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("due = instant", vf(val(f.due, 0, indexquery.OpEqual, ptr("2025-01-01T00:00:00.0000000+00:00"))), byID, indexquery.Page{}, []int64{f.a}, false)
	search("title = (case)", vf(val(f.title, en, indexquery.OpEqual, ptr("HELLO WORLD"))), byID, indexquery.Page{}, []int64{f.a}, false)
	search("title null", vf(val(f.title, en, indexquery.OpEqual, nil)), byID, indexquery.Page{}, []int64{f.b, f.d}, false)
	search("title not null", vf(val(f.title, en, indexquery.OpNotEqual, nil)), byID, indexquery.Page{}, []int64{f.a, f.c}, false)
	search("title wildcard prefix", vf(val(f.title, en, indexquery.OpWildcard, ptr("hello*"))), byID, indexquery.Page{}, []int64{f.a, f.c}, false)
	search("name wildcard inner", vf(val(content.AttrName, en, indexquery.OpWildcard, ptr("*a ?ome"))), byID, indexquery.Page{}, []int64{f.a}, false)
	search("name wildcard contains", vf(val(content.AttrName, en, indexquery.OpWildcard, ptr("*ta*"))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("ref", vf(val(f.related, 0, indexquery.OpRef, ptr(fmt.Sprint(f.a)))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("ref any attribute", vf(val(0, 0, indexquery.OpRef, ptr(fmt.Sprint(f.a)))), byID, indexquery.Page{}, []int64{f.b}, false)
	search("two filters", vf(val(f.rank, 0, indexquery.OpGreaterThan, ptr("1")), val(f.title, en, indexquery.OpNotEqual, nil)), byID, indexquery.Page{}, []int64{f.a}, false)

	search("sort name", live, []indexquery.SortBy{{Kind: indexquery.SortDisplayName}}, indexquery.Page{}, []int64{f.a, f.b, f.c, f.d}, false)
	search("sort name desc", live, []indexquery.SortBy{{Kind: indexquery.SortDisplayName, Reverse: true}}, indexquery.Page{}, []int64{f.c, f.b, f.a, f.d}, false)
	search("sort id desc", live, []indexquery.SortBy{{Kind: indexquery.SortObjID, Reverse: true}}, indexquery.Page{}, []int64{f.d, f.c, f.b, f.a}, false)
	search("sort type, modified, user", live, []indexquery.SortBy{{Kind: indexquery.SortTypeRef}, {Kind: indexquery.SortModifiedBy}, {Kind: indexquery.SortModified}}, indexquery.Page{}, all, false)
	search("sort rank", live, []indexquery.SortBy{{Kind: indexquery.SortAttribute, AttrKey: indexquery.AttrKey{Attr: f.rank}}}, indexquery.Page{}, []int64{f.c, f.a, f.d, f.b}, false)
	search("sort rank desc page", live, []indexquery.SortBy{{Kind: indexquery.SortAttribute, AttrKey: indexquery.AttrKey{Attr: f.rank}, Reverse: true}}, indexquery.Page{Skip: 1, Take: 2}, []int64{f.d, f.a}, true)
	search("sort title (missing last)", live, []indexquery.SortBy{{Kind: indexquery.SortAttribute, AttrKey: indexquery.AttrKey{Attr: f.title, Lang: en}}}, indexquery.Page{}, []int64{f.c, f.a, f.b, f.d}, false)
	search("page 1", live, byID, indexquery.Page{Skip: 1, Take: 2}, []int64{f.b, f.c}, true)
	search("page last", live, byID, indexquery.Page{Skip: 3, Take: 2}, []int64{f.d}, false)
	search("page beyond", live, byID, indexquery.Page{Skip: 9, Take: 2}, []int64{}, false)

	// The child branch inherits everything and sees its own change.
	res, err := e.q.Search(ctx, indexquery.SearchRequest{Branch: f.child, Filter: with(func(c *indexquery.Filter) { c.HasLocalValues = true })})
	if err != nil || !slices.Equal(ids(res.Items), []int64{f.b}) || res.Items[0].DisplayName != "Beta on spring" {
		t.Errorf("child local: %+v, %v", res, err)
	}
	res, err = e.q.Search(ctx, indexquery.SearchRequest{Branch: 4, Filter: with(func(c *indexquery.Filter) { c.ObjectIDs = []int64{f.d} })})
	if err != nil || len(res.Items) != 1 || res.Items[0].DisplayName != fmt.Sprintf("Object %d", f.d) || res.Items[0].HasDisplayName ||
		res.Items[0].ModifiedBy != "editor" || res.Items[0].Modified.IsZero() || res.Items[0].TypeRef != f.article {
		t.Errorf("item of d: %+v, %v", res, err)
	}
	res, err = e.q.Search(ctx, indexquery.SearchRequest{Branch: 99999, Filter: live})
	if err != nil || len(res.Items) != 0 || res.More {
		t.Errorf("unknown branch: %+v, %v", res, err)
	}

	// Count.
	for _, c := range []struct {
		branch int64
		flt    indexquery.Filter
		want   int64
	}{{4, live, 4}, {4, with(func(c *indexquery.Filter) { c.Deleted = nil }), 5}, {f.child, live, 4}, {99999, live, 0},
		{4, vf(val(f.rank, 0, indexquery.OpGreaterThan, ptr("3"))), 2}} {
		got, err := e.q.Count(ctx, indexquery.CountRequest{Branch: c.branch, Filter: c.flt})
		if err != nil || got.Count != c.want || got.Version != version {
			t.Errorf("count on %d: %+v, %v; want %d", c.branch, got, err, c.want)
		}
	}

	// Occurrences.
	occ, err := e.q.Occurrences(ctx, indexquery.OccurrencesRequest{Branch: 4, Filter: with(func(c *indexquery.Filter) { c.Deleted = nil }),
		ModifiedBy: true, Type: true, Deleted: true})
	if err != nil {
		t.Fatal(err)
	}
	wantOcc := func(name string, o *indexquery.Occurrences, typ string, null, notNull int64, vals []indexquery.Occurrence, more bool) {
		t.Helper()
		if o == nil || o.ValueType != typ || o.Null != null || o.NotNull != notNull || !slices.Equal(o.Values, vals) || o.More != more {
			t.Errorf("%s occurrences: %+v; want %s %d/%d %v more %v", name, o, typ, null, notNull, vals, more)
		}
	}
	wantOcc("type", occ.Type, "number", 0, 5, []indexquery.Occurrence{{Value: f.article, Count: 5}}, false)
	wantOcc("modifiedBy", occ.ModifiedBy, "string", 0, 5, []indexquery.Occurrence{{Value: "editor", Count: 5}}, false)
	wantOcc("deleted", occ.Deleted, "boolean", 0, 5, []indexquery.Occurrence{{Value: false, Count: 4}, {Value: true, Count: 1}}, false)
	occ, err = e.q.Occurrences(ctx, indexquery.OccurrencesRequest{Branch: 4, Filter: indexquery.Filter{}, Type: true, Page: indexquery.Page{Take: 2}})
	if err != nil || occ.Type == nil || len(occ.Type.Values) != 2 || !occ.Type.More || occ.ModifiedBy != nil ||
		compareInt(occ.Type.Values[0].Value, occ.Type.Values[1].Value) >= 0 {
		t.Errorf("type occurrences take 2: %+v, %v", occ.Type, err)
	}
	occ, err = e.q.Occurrences(ctx, indexquery.OccurrencesRequest{Branch: 99999, Type: true})
	if err != nil || occ.Type == nil || len(occ.Type.Values) != 0 || occ.Type.NotNull != 0 {
		t.Errorf("unknown branch occurrences: %+v, %v", occ.Type, err)
	}

	// Work items: the one object changed on the child branch.
	wi, err := e.q.WorkItemOccurrences(ctx, indexquery.WorkItemRequest{})
	if err != nil || !slices.Equal(wi.Branches.Values, []indexquery.Occurrence{{Value: f.child, Count: 1}}) || wi.Version != version {
		t.Errorf("work items: %+v, %v", wi, err)
	}

	// Suggestions.
	suggest := func(name string, r indexquery.SuggestionsRequest, want []indexquery.Suggestion) {
		t.Helper()
		r.Branch = 4
		if r.Filter.TypeIDs == nil {
			r.Filter = live
		}
		got, err := e.q.Suggestions(ctx, r)
		if err != nil || !slices.Equal(got.Suggestions, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got.Suggestions, err, want)
		}
	}
	titles := []indexquery.AttrKey{{Attr: f.title, Lang: en}}
	suggest("prefix", indexquery.SuggestionsRequest{Pattern: ptr("He"), Attributes: titles}, []indexquery.Suggestion{{Value: "hello", Count: 2, Length: 3}})
	suggest("display name", indexquery.SuggestionsRequest{Pattern: ptr("al"), DisplayName: true}, []indexquery.Suggestion{{Value: "alpha", Count: 1, Length: 3}})
	suggest("second word", indexquery.SuggestionsRequest{Pattern: ptr("hello w"), Attributes: titles}, []indexquery.Suggestion{{Value: "world", Count: 1, Length: 4}})
	suggest("empty pattern by count", indexquery.SuggestionsRequest{Attributes: titles, Take: ptr(2)},
		[]indexquery.Suggestion{{Value: "hello", Count: 2, Length: 5}, {Value: "there", Count: 1, Length: 5}})
	suggest("by value", indexquery.SuggestionsRequest{Attributes: titles, SortByValue: true},
		[]indexquery.Suggestion{{Value: "hello", Count: 2, Length: 5}, {Value: "there", Count: 1, Length: 5}, {Value: "world", Count: 1, Length: 5}})
	suggest("fuzzy", indexquery.SuggestionsRequest{Pattern: ptr("helo"), Attributes: titles, Fuzzy: true}, []indexquery.Suggestion{{Value: "hello", Count: 2, Length: 1}})
	suggest("fuzzy strict", indexquery.SuggestionsRequest{Pattern: ptr("hxlxo"), Attributes: titles, Fuzzy: true, FuzzyMinSimilarity: ptr(0.7)}, []indexquery.Suggestion{})
	suggest("fuzzy prefix length", indexquery.SuggestionsRequest{Pattern: ptr("jello"), Attributes: titles, Fuzzy: true, FuzzyPrefixLength: 1}, []indexquery.Suggestion{})
	suggest("not analysed", indexquery.SuggestionsRequest{Pattern: ptr("Hello W"), Attributes: titles, Analyze: ptr(false)}, []indexquery.Suggestion{{Value: "hello world", Count: 1, Length: 4}})
	suggest("full text", indexquery.SuggestionsRequest{Pattern: ptr("gam"), FullText: true}, []indexquery.Suggestion{{Value: "gamma", Count: 1, Length: 2}})
	for _, bad := range []indexquery.SuggestionsRequest{{Take: ptr(0)}, {Take: ptr(1001)}, {FuzzyMinSimilarity: ptr(1.0)}, {FuzzyPrefixLength: -1}} {
		if _, err := e.q.Suggestions(ctx, bad); !errors.Is(err, indexquery.ErrInvalid) {
			t.Errorf("suggestions %+v: err %v, want ErrInvalid", bad, err)
		}
	}

	// Freshness: a version not reached yet answers with the current one
	// after maxWaitTime; a bad duration is invalid.
	start := time.Now()
	got, err := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Filter: live, Freshness: indexquery.Freshness{MinVersion: ptr(version + 100), MaxWait: "00:00:00.2"}})
	if err != nil || got.Version != version || time.Since(start) < 200*time.Millisecond || time.Since(start) > 5*time.Second {
		t.Errorf("wait: %+v, %v after %v", got, err, time.Since(start))
	}
	if _, err := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Freshness: indexquery.Freshness{MinVersion: ptr(int64(1)), MaxWait: "soon"}}); !errors.Is(err, indexquery.ErrInvalid) {
		t.Errorf("bad maxWaitTime: %v", err)
	}
	// A write made after the request started is waited for.
	done := make(chan indexquery.CountResult, 1)
	go func() {
		r, _ := e.q.Count(ctx, indexquery.CountRequest{Branch: 4, Filter: live, Freshness: indexquery.Freshness{MinVersion: ptr(version + 1), MaxWait: "PT10S"}})
		done <- r
	}()
	time.Sleep(100 * time.Millisecond) // let the request start waiting
	if _, _, err := e.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: f.article}}); err != nil {
		t.Fatal(err)
	}
	v2 := e.sync(t)
	if r := <-done; r.Version != v2 || r.Count != 5 {
		t.Errorf("read your writes: %+v, want version %d count 5", r, v2)
	}

	// Bad input.
	for name, r := range map[string]indexquery.SearchRequest{
		"negative skip": {Branch: 4, Page: indexquery.Page{Skip: -1}},
		"bad sort":      {Branch: 4, Sort: []indexquery.SortBy{{Kind: 9}}},
		"bad operator":  {Branch: 4, Filter: vf(val(f.rank, 0, 8, ptr("1")))},
		"bad ref":       {Branch: 4, Filter: vf(val(f.rank, 0, indexquery.OpRef, ptr("x")))},
		"range null":    {Branch: 4, Filter: vf(val(f.rank, 0, indexquery.OpLessThan, nil))},
		"bad lucene":    {Branch: 4, Filter: indexquery.Filter{FullText: ptr("(a")}},
	} {
		if _, err := e.q.Search(ctx, r); !errors.Is(err, indexquery.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
}

func compareInt(a, b any) int {
	x, _ := a.(int64)
	y, _ := b.(int64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
