package indexquery_test

import (
	"context"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexquery"
)

func TestCommentsBleve(t *testing.T) { commentScenario(t, bleveEnv(t)) }

// TestCommentsElasticsearch runs the same scenario on Elasticsearch
// (CMS_ELASTICSEARCH_URL; skipped without it, failing under CI=true).
func TestCommentsElasticsearch(t *testing.T) { commentScenario(t, elasticEnv(t)) }

func TestXMLLinkCountBleve(t *testing.T) { xmlLinkScenario(t, bleveEnv(t)) }

func TestXMLLinkCountElasticsearch(t *testing.T) { xmlLinkScenario(t, elasticEnv(t)) }

func commentIDs(items []indexquery.CommentItem) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// commentScenario writes comments through pkg/content, applies the outbox
// and checks search, count, occurrences and freshness.
func commentScenario(t *testing.T, e *env) {
	ctx := context.Background()
	q := e.q
	// Before any comment: empty answers, no timestamp.
	if r, err := q.CommentSearch(ctx, indexquery.CommentSearchRequest{Branch: 4}); err != nil || len(r.Items) != 0 || r.Timestamp != nil {
		t.Fatalf("empty index: %+v %v", r, err)
	}
	f := build(t, e)
	s := e.svc
	alice := content.Actor{Caller: &auth.Principal{Name: "Alice"}}
	bob := content.Actor{Caller: &auth.Principal{Name: "bob"}}
	long := "<div><p>" + fmt.Sprint(slices.Repeat([]string{"word"}, 30)) + "</p></div>"
	c1, err := s.CreateComment(ctx, alice, 4, f.a, `<div><p>Please review the <b>headline</b>, <span class="mention" data-user="bob">@bob</span></p></div>`)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.CreateComment(ctx, bob, 4, f.b, `<div>Done. Ping <span class="mention">@Carol</span> and <span class="mention">@alice</span></div>`)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := s.CreateComment(ctx, alice, 4, f.article, long)
	if err != nil {
		t.Fatal(err)
	}
	cChild, err := s.CreateComment(ctx, bob, f.child, f.b, `<div>child branch headline</div>`)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.CreateComment(ctx, bob, 4, f.a, `<div>headline obsolete</div>`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteComment(ctx, bob, gone.ID); err != nil {
		t.Fatal(err)
	}
	e.sync(t)

	search := func(r indexquery.CommentSearchRequest) indexquery.CommentSearchResult {
		t.Helper()
		if r.Branch == 0 {
			r.Branch = 4
		}
		res, err := q.CommentSearch(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Default order: newest first; deleted and other-branch comments absent.
	all := search(indexquery.CommentSearchRequest{})
	if got, want := commentIDs(all.Items), []int64{c3.ID, c2.ID, c1.ID}; !slices.Equal(got, want) {
		t.Fatalf("all comments %v, want %v", got, want)
	}
	if all.Timestamp == nil {
		t.Fatal("no change-tracking timestamp")
	}
	it := all.Items[2]
	if it.User != "Alice" || it.ObjectRef != f.a || it.ObjectType != f.article || !it.Created.Equal(c1.Created) ||
		!it.Modified.Equal(c1.Modified) || it.Summary != "Please review the headline, @bob" || !slices.Equal(it.MentionedUsers, []string{"bob"}) {
		t.Errorf("item c1: %+v (created %v)", it, c1.Created)
	}
	if m := all.Items[1].MentionedUsers; !slices.Equal(m, []string{"Carol", "alice"}) {
		t.Errorf("c2 mentions %v", m)
	}
	if sum := []rune(all.Items[0].Summary); len(sum) != 65 || sum[64] != '…' {
		t.Errorf("long summary %q (%d runes)", string(sum), len(sum))
	}
	child := search(indexquery.CommentSearchRequest{Branch: f.child})
	if got := commentIDs(child.Items); !slices.Equal(got, []int64{cChild.ID}) {
		t.Errorf("child branch %v", got)
	}
	if r := search(indexquery.CommentSearchRequest{Branch: 99999}); len(r.Items) != 0 || r.More {
		t.Errorf("unknown branch %+v", r)
	}

	// Filters.
	for _, c := range []struct {
		name string
		f    indexquery.CommentFilter
		want []int64
	}{
		{"phrase", indexquery.CommentFilter{SearchPhrase: ptr("headline")}, []int64{c1.ID}},
		{"phrase words", indexquery.CommentFilter{SearchPhrase: ptr("review HEADLINE")}, []int64{c1.ID}},
		{"phrase prefix", indexquery.CommentFilter{SearchPhrase: ptr("revi*")}, []int64{c1.ID}},
		{"phrase none", indexquery.CommentFilter{SearchPhrase: ptr("headline done")}, []int64{}},
		{"phrase of one 4,000-byte word", indexquery.CommentFilter{SearchPhrase: ptr(strings.Repeat("v", 4000))}, []int64{}}, // 2 MiB: TestPhraseCaps
		{"phrase of a 4,000-byte prefix", indexquery.CommentFilter{SearchPhrase: ptr(strings.Repeat("v", 4000) + "*")}, []int64{}},
		{"user", indexquery.CommentFilter{User: ptr("alice")}, []int64{c3.ID, c1.ID}},
		{"mentioned", indexquery.CommentFilter{Mentioned: ptr("ALICE")}, []int64{c2.ID}},
		{"mentioned bob", indexquery.CommentFilter{Mentioned: ptr("bob")}, []int64{c1.ID}},
		{"types", indexquery.CommentFilter{ObjectTypes: []int64{f.article}}, []int64{c2.ID, c1.ID}},
		{"types root", indexquery.CommentFilter{ObjectTypes: []int64{content.RootID}}, []int64{c3.ID}},
		{"combined", indexquery.CommentFilter{User: ptr("Alice"), ObjectTypes: []int64{f.article}}, []int64{c1.ID}},
	} {
		r := search(indexquery.CommentSearchRequest{Filter: c.f})
		if got := commentIDs(r.Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		n, err := q.CommentCount(ctx, indexquery.CommentCountRequest{Branch: 4, Filter: c.f})
		if err != nil || n.Count != int64(len(c.want)) || n.Timestamp == nil {
			t.Errorf("%s: count %+v %v", c.name, n, err)
		}
	}

	// Sort and page.
	for _, c := range []struct {
		sort indexquery.CommentSort
		want []int64
	}{
		{indexquery.CommentSort{Field: indexquery.CommentFieldID}, []int64{c1.ID, c2.ID, c3.ID}},
		{indexquery.CommentSort{Field: indexquery.CommentFieldUser, Reverse: true}, []int64{c2.ID, c1.ID, c3.ID}},
		{indexquery.CommentSort{Field: indexquery.CommentFieldCreated, Reverse: true}, []int64{c3.ID, c2.ID, c1.ID}},
		{indexquery.CommentSort{Field: indexquery.CommentFieldModified}, []int64{c1.ID, c2.ID, c3.ID}},
		{indexquery.CommentSort{Field: indexquery.CommentFieldObjectID}, []int64{c3.ID, c1.ID, c2.ID}},
		{indexquery.CommentSort{Field: indexquery.CommentFieldObjectType, Reverse: true}, []int64{c1.ID, c2.ID, c3.ID}},
	} {
		r := search(indexquery.CommentSearchRequest{Sort: &c.sort})
		if got := commentIDs(r.Items); !slices.Equal(got, c.want) {
			t.Errorf("sort %+v: %v, want %v", c.sort, got, c.want)
		}
	}
	p := search(indexquery.CommentSearchRequest{Sort: &indexquery.CommentSort{}, Page: indexquery.Page{Skip: 1, Take: 1}})
	if got := commentIDs(p.Items); !slices.Equal(got, []int64{c2.ID}) || !p.More {
		t.Errorf("page 2: %v more=%v", got, p.More)
	}
	p = search(indexquery.CommentSearchRequest{Sort: &indexquery.CommentSort{}, Page: indexquery.Page{Skip: 2, Take: 1}})
	if got := commentIDs(p.Items); !slices.Equal(got, []int64{c3.ID}) || p.More {
		t.Errorf("page 3: %v more=%v", got, p.More)
	}
	if _, err := q.CommentSearch(ctx, indexquery.CommentSearchRequest{Branch: 4, Sort: &indexquery.CommentSort{Field: 6}}); err == nil {
		t.Error("sort field 6 accepted")
	}

	// Occurrences.
	occ, err := q.CommentOccurrences(ctx, indexquery.CommentOccurrencesRequest{Branch: 4, User: true, MentionedUsers: true, ObjectType: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(occ.User.Values); got != "[{Alice 2} {bob 1}]" || occ.User.NotNull != 3 || occ.User.ValueType != "string" {
		t.Errorf("user occurrences %+v", occ.User)
	}
	if got := fmt.Sprint(occ.MentionedUsers.Values); got != "[{Carol 1} {alice 1} {bob 1}]" || occ.MentionedUsers.Null != 1 || occ.MentionedUsers.NotNull != 2 {
		t.Errorf("mentioned occurrences %+v", occ.MentionedUsers)
	}
	if got := fmt.Sprint(occ.ObjectType.Values); got != fmt.Sprintf("[{%d 1} {%d 2}]", content.RootID, f.article) || occ.ObjectType.ValueType != "number" {
		t.Errorf("type occurrences %+v", occ.ObjectType)
	}
	occ, err = q.CommentOccurrences(ctx, indexquery.CommentOccurrencesRequest{Branch: 4, User: true, Page: indexquery.Page{Take: 1},
		Filter: indexquery.CommentFilter{SearchPhrase: ptr("headline")}})
	if err != nil || occ.MentionedUsers != nil || fmt.Sprint(occ.User.Values) != "[{Alice 1}]" || occ.User.More {
		t.Errorf("filtered occurrences %+v %v", occ.User, err)
	}

	// Update and delete reach the index; freshness by timestamp.
	if err := s.UpdateComment(ctx, alice, c1.ID, `<div>rewritten for <span data-user="dave">Dave</span></div>`); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteComment(ctx, bob, c2.ID); err != nil {
		t.Fatal(err)
	}
	upd, err := s.GetComment(ctx, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Not applied yet: the wait times out and answers the old state.
	minTime := upd.Modified
	r, err := q.CommentSearch(ctx, indexquery.CommentSearchRequest{Branch: 4,
		CommentFreshness: indexquery.CommentFreshness{MinTimestamp: &minTime, MaxWait: "00:00:00.05"}})
	if err != nil || len(r.Items) != 3 || r.Timestamp == nil || !r.Timestamp.Before(minTime) {
		t.Fatalf("stale read %+v %v", r, err)
	}
	done := make(chan indexquery.CommentSearchResult, 1)
	go func() {
		r, _ := q.CommentSearch(ctx, indexquery.CommentSearchRequest{Branch: 4, Filter: indexquery.CommentFilter{Mentioned: ptr("dave")},
			CommentFreshness: indexquery.CommentFreshness{MinTimestamp: &minTime, MaxWait: "PT10S"}})
		done <- r
	}()
	time.Sleep(50 * time.Millisecond)
	e.sync(t)
	got := <-done
	if ids := commentIDs(got.Items); !slices.Equal(ids, []int64{c1.ID}) || got.Timestamp == nil || got.Timestamp.Before(minTime) {
		t.Errorf("read your writes: %+v, want c1 at >= %v", got, minTime)
	} else if it := got.Items[0]; it.Summary != "rewritten for Dave" || !it.Modified.Equal(upd.Modified) {
		t.Errorf("updated item %+v", it)
	}
	if r := search(indexquery.CommentSearchRequest{}); !slices.Equal(commentIDs(r.Items), []int64{c3.ID, c1.ID}) {
		t.Errorf("after delete %v", commentIDs(r.Items))
	}

	// Deleting the branch removes its comments from the index.
	if _, err := s.DeleteBranch(ctx, fmt.Sprint(f.child), editor); err != nil {
		t.Fatal(err)
	}
	e.sync(t)
	if n, err := q.CommentCount(ctx, indexquery.CommentCountRequest{Branch: f.child}); err != nil || n.Count != 0 {
		t.Errorf("deleted branch count %+v %v", n, err)
	}
}

// xmlLinkScenario indexes XmlRef values linking to objects and counts the
// objects linking to given ids.
func xmlLinkScenario(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.svc
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	_, attr, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeAttribute,
		Values: []content.ValueInput{vin(content.AttrDataType, 0, "XmlRef.SimpleHtml")}}})
	if err != nil {
		t.Fatal(err)
	}
	body := attr[0]
	create := func(xml string) int64 {
		t.Helper()
		in := content.ObjectInput{TypeID: typ[0]}
		if xml != "" {
			in.Values = []content.ValueInput{vin(body, 0, xml)}
		}
		_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{in})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	target1, target2 := create(""), create("")
	a := create(fmt.Sprintf(`<div xmlns="http://www.w3.org/1999/xhtml"><p>See <a href="objref:%d">one</a> and <a data-objref="%d">two</a></p></div>`, target1, target2))
	b := create(fmt.Sprintf(`<div><img src="cms://objects/%d"/></div>`, target1))
	create(`<div><a href="https://example.com/1">no link</a></div>`)
	v := e.sync(t)
	count := func(ids ...int64) int64 {
		t.Helper()
		r, err := e.q.XMLLinkCount(ctx, indexquery.XMLLinkCountRequest{Branch: 4, ObjectIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		if r.Version != v {
			t.Errorf("version %d, want %d", r.Version, v)
		}
		return r.Count
	}
	if n := count(target1); n != 2 {
		t.Errorf("links to target1: %d, want 2", n)
	}
	if n := count(target2); n != 1 {
		t.Errorf("links to target2: %d, want 1", n)
	}
	if n := count(target1, target2); n != 2 {
		t.Errorf("links to both: %d, want 2 objects", n)
	}
	if n := count(); n != 0 {
		t.Errorf("no ids: %d", n)
	}
	// Removing the link and deleting the other linking object.
	if _, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: a,
		Values: []content.ValueInput{vin(body, 0, "<div>plain</div>")}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.DeleteObjects(ctx, "4", editor, []string{fmt.Sprint(b)}); err != nil {
		t.Fatal(err)
	}
	v = e.sync(t)
	if n := count(target1, target2); n != 0 {
		t.Errorf("after update and delete: %d, want 0", n)
	}
}
