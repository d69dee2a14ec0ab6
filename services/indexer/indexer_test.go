package indexer_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

func TestIndexerEmbedded(t *testing.T) { scenario(t, embeddedEnv(t)) }

// TestIndexerDistributed runs the same scenario on PostgreSQL, NATS and
// Elasticsearch (skipped without CMS_*_URL, failing under CI=true).
func TestIndexerDistributed(t *testing.T) { scenario(t, realEnv(t)) }

type schema struct{ article, title, rank, related, body, due int64 }

func newSchema(t *testing.T, s *content.Service) schema {
	t.Helper()
	ctx := context.Background()
	_, typ, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.RootID, APIIdentifier: ptr("article"), Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, "Article")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, attrs, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("title"), Values: []content.ValueInput{
			vin(content.AttrDataType, 0, "String"), vin(content.AttrLanguageDependent, 0, true)}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("rank"), Values: []content.ValueInput{vin(content.AttrDataType, 0, "Integer")}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("related"), Values: []content.ValueInput{
			vin(content.AttrDataType, 0, "ObjRef"), vin(content.AttrAllowMultiple, 0, true), vin(content.AttrReferencedTypes, 0, typ[0])}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("body"), Values: []content.ValueInput{vin(content.AttrDataType, 0, "XmlRef.SimpleHtml")}},
		{TypeID: content.TypeAttribute, APIIdentifier: ptr("due"), Values: []content.ValueInput{vin(content.AttrDataType, 0, "DateTime")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return schema{article: typ[0], title: attrs[0], rank: attrs[1], related: attrs[2], body: attrs[3], due: attrs[4]}
}

func has(f map[string]any, field string, v any) bool {
	switch x := f[field].(type) {
	case []any:
		return slices.Contains(x, v)
	default:
		return x == v
	}
}

func scenario(t *testing.T, e *env) {
	ctx := context.Background()
	s := e.svc
	sc := newSchema(t, s)
	const en, de = content.LanguageEnUS, content.LanguageDeDE
	child, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(content.AttrName, en, "Spring"), vin(content.AttrBranchParent, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	_, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: sc.article,
		Values: []content.ValueInput{vin(content.AttrName, en, "Target")}}})
	if err != nil {
		t.Fatal(err)
	}
	target := ids[0]
	_, ids, err = s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("home"),
		Values: []content.ValueInput{
			vin(content.AttrName, en, "Home"), vin(content.AttrName, de, "Startseite"),
			vin(sc.title, en, "Parent"), vin(sc.title, de, "Eltern"), vin(sc.rank, 0, 1),
			vin(sc.related, 0, target), vin(sc.body, 0, "<div><p>Hello &amp; welcome</p></div>"),
			vin(sc.due, 0, "2025-06-15T10:30:00Z"),
		}}})
	if err != nil {
		t.Fatal(err)
	}
	page := ids[0]
	createOther, ids, err := s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: sc.article,
		Values: []content.ValueInput{vin(content.AttrName, en, "Other")}}})
	if err != nil {
		t.Fatal(err)
	}
	other := ids[0]
	if _, err := s.UpdateObjects(ctx, id(child.ID), editor, []content.ObjectInput{{ID: page,
		Values: []content.ValueInput{vin(sc.title, en, "Child")}}}); err != nil {
		t.Fatal(err)
	}
	_, ids, err = s.CreateObjects(ctx, id(child.ID), editor, []content.ObjectInput{{TypeID: sc.article,
		Values: []content.ValueInput{vin(content.AttrName, en, "Draft")}}})
	if err != nil {
		t.Fatal(err)
	}
	draft := ids[0]
	_, del, err := s.DeleteObjects(ctx, "4", editor, []string{id(other)})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, del.ID)

	t.Run("values on the default branch", func(t *testing.T) {
		d := e.doc(t, 4, page)
		for _, c := range []struct {
			field string
			want  any
		}{
			{indexdoc.FieldBranch, int64(4)}, {indexdoc.FieldID, page}, {indexdoc.FieldTypeRef, sc.article},
			{indexdoc.FieldAPIIdentifier, "home"}, {indexdoc.FieldDeleted, false}, {indexdoc.FieldHasLocalValues, true},
			{indexdoc.FieldHasDisplayName, true}, {indexdoc.FieldModifiedBy, "editor"},
			{indexdoc.NameField(en), "Home"}, {indexdoc.NameField(de), "Startseite"}, {indexdoc.NameSortField(en), "home"},
			{indexdoc.FieldName, "202=Startseite"},
			{indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, en, 0, "Parent")},
			{indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, de, 0, "Eltern")},
			{indexdoc.FieldValues, indexdoc.ValueTerm(sc.rank, 0, 0, "1")},
			{indexdoc.FieldValues, indexdoc.ValueTerm(sc.related, 0, 0, fmt.Sprint(target))},
			{indexdoc.FieldValuesLower, indexdoc.ValueTerm(sc.title, en, 0, "parent")},
			{indexdoc.FieldRefs, target},
			{indexdoc.FieldOrdered, indexdoc.OrderedTerm('n', sc.rank, 0, 0, indexdoc.EncodeNumber(1))},
			{indexdoc.FieldWords, indexdoc.Key(sc.body, 0, 0) + "=welcome"},
			{indexdoc.FieldFullText, "Hello & welcome"},
			{indexdoc.FieldKeys, indexdoc.Key(sc.due, 0, 0)},
		} {
			if !has(d, c.field, c.want) {
				t.Errorf("%s: want %v in %v", c.field, c.want, d[c.field])
			}
		}
		if _, ok := d[indexdoc.FieldModified]; !ok {
			t.Errorf("no %s in %v", indexdoc.FieldModified, d)
		}
	})

	t.Run("inherited values on the child branch", func(t *testing.T) {
		d := e.doc(t, child.ID, page)
		if d == nil {
			t.Fatal("page not indexed on the child branch")
		}
		if !has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, en, 0, "Child")) ||
			!has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, de, 0, "Eltern")) ||
			has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, en, 0, "Parent")) ||
			!has(d, indexdoc.FieldRefs, target) || !has(d, indexdoc.NameField(en), "Home") ||
			!has(d, indexdoc.FieldHasLocalValues, true) || !has(d, indexdoc.FieldBranch, child.ID) {
			t.Errorf("child document = %v", d)
		}
		if d := e.doc(t, child.ID, target); d == nil || !has(d, indexdoc.FieldHasLocalValues, false) {
			t.Errorf("inherited-only target on the child = %v", d)
		}
		if e.doc(t, child.ID, draft) == nil || e.doc(t, 4, draft) != nil {
			t.Error("an object created on the child must be indexed on the child only")
		}
		if e.doc(t, 4, child.ID) == nil || e.doc(t, child.ID, child.ID) == nil {
			t.Error("the branch object must be indexed on branch 4 and its descendants")
		}
	})

	t.Run("search", func(t *testing.T) {
		r, err := e.eng.Search(ctx, search.SearchRequest{Index: e.ix.ObjectsIndex(), Size: 10, Query: search.And{
			search.Term{Field: indexdoc.FieldBranch, Value: child.ID},
			search.Term{Field: indexdoc.FieldValues, Value: indexdoc.ValueTerm(sc.title, en, 0, "Child")}}})
		if err != nil || len(r.Hits) != 1 || r.Hits[0].ID != indexdoc.DocID(child.ID, page) {
			t.Fatalf("term search: %+v, %v", r, err)
		}
		lo, hi := indexdoc.OrderedBounds('n', sc.rank, 0, 0)
		r, err = e.eng.Search(ctx, search.SearchRequest{Index: e.ix.ObjectsIndex(), Size: 10, Query: search.And{
			search.Term{Field: indexdoc.FieldBranch, Value: int64(4)},
			search.Range{Field: indexdoc.FieldOrdered, Gt: indexdoc.OrderedTerm('n', sc.rank, 0, 0, indexdoc.EncodeNumber(0.5)), Lt: hi}}})
		if err != nil || len(r.Hits) != 1 || r.Hits[0].ID != indexdoc.DocID(4, page) {
			t.Fatalf("range rank > 0.5: %+v, %v", r, err)
		}
		n, err := e.eng.Count(ctx, e.ix.ObjectsIndex(), search.And{search.Term{Field: indexdoc.FieldBranch, Value: int64(4)},
			search.Range{Field: indexdoc.FieldOrdered, Gt: lo, Lt: indexdoc.OrderedTerm('n', sc.rank, 0, 0, indexdoc.EncodeNumber(1))}})
		if err != nil || n != 0 {
			t.Fatalf("range rank < 1: %d, %v", n, err)
		}
		r, err = e.eng.Search(ctx, search.SearchRequest{Index: e.ix.ObjectsIndex(), Size: 10, Query: search.And{
			search.Term{Field: indexdoc.FieldBranch, Value: int64(4)},
			search.Match{Field: indexdoc.FieldFullText, Text: "welcome", All: true}}})
		if err != nil || len(r.Hits) != 1 {
			t.Fatalf("full text: %+v, %v", r, err)
		}
	})

	t.Run("deleted object is kept, flagged", func(t *testing.T) {
		for _, b := range []int64{4, child.ID} {
			if d := e.doc(t, b, other); d == nil || d[indexdoc.FieldDeleted] != true {
				t.Fatalf("deleted object on branch %d: %v, want its document with %s = true", b, d, indexdoc.FieldDeleted)
			}
		}
	})

	t.Run("a parent change reindexes the child", func(t *testing.T) {
		res, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: page, Values: []content.ValueInput{vin(sc.rank, 0, 2)}}})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(t, res.Transaction.ID)
		if d := e.doc(t, child.ID, page); !has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.rank, 0, 0, "2")) ||
			!has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, en, 0, "Child")) {
			t.Fatalf("child after parent update = %v", d)
		}
	})

	t.Run("replayed older event does not resurrect", func(t *testing.T) {
		old := changes.Event{Branch: 4, Transaction: createOther.ID, ObjectIDs: []int64{other}, Kind: "created"}
		res, err := e.ix.Apply(ctx, old)
		if err != nil || res.Ops == 0 || res.Stale != res.Ops {
			t.Fatalf("direct replay: %+v, %v (want every op stale)", res, err)
		}
		// And through the stream, with a fresh MsgID so JetStream keeps it.
		if err := e.pub.Publish(ctx, events.Event{Subject: changes.Subject(4), MsgID: "replay-" + uniq(),
			Data: js(old)}); err != nil {
			t.Fatal(err)
		}
		upd, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: target, Values: []content.ValueInput{vin(content.AttrName, en, "Target 2")}}})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(t, upd.Transaction.ID) // in order: the replay was handled before
		for _, b := range []int64{4, child.ID} {
			if d := e.doc(t, b, other); d == nil || d[indexdoc.FieldDeleted] != true {
				t.Fatalf("replayed create event resurrected a deleted object on branch %d: %v", b, d)
			}
		}
		if d := e.doc(t, child.ID, target); !has(d, indexdoc.NameField(en), "Target 2") {
			t.Fatalf("target on child = %v", d)
		}
	})

	t.Run("deleted branch loses its documents", func(t *testing.T) {
		temp, _, err := s.CreateBranch(ctx, editor, []content.ValueInput{vin(content.AttrName, en, "Temp"), vin(content.AttrBranchParent, 0, child.ID)})
		if err != nil {
			t.Fatal(err)
		}
		tx, ids, err := s.CreateObjects(ctx, id(temp.ID), editor, []content.ObjectInput{{TypeID: sc.article,
			Values: []content.ValueInput{vin(content.AttrName, en, "Temp object")}}})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(t, tx.ID)
		if d := e.doc(t, temp.ID, page); !has(d, indexdoc.FieldValues, indexdoc.ValueTerm(sc.title, en, 0, "Child")) {
			t.Fatalf("a new grandchild branch must index what it inherits: %v", d)
		}
		if e.doc(t, temp.ID, ids[0]) == nil || e.doc(t, child.ID, temp.ID) == nil {
			t.Fatal("temp object or branch object not indexed")
		}
		dt, err := s.DeleteBranch(ctx, id(temp.ID), editor)
		if err != nil {
			t.Fatal(err)
		}
		e.wait(t, dt.ID)
		n, err := e.eng.Count(ctx, e.ix.ObjectsIndex(), search.Term{Field: indexdoc.FieldBranch, Value: temp.ID})
		if err != nil || n != 0 {
			t.Fatalf("documents left on the deleted branch: %d, %v", n, err)
		}
		if e.doc(t, 4, temp.ID) != nil || e.doc(t, child.ID, temp.ID) != nil {
			t.Fatal("deleted branch object still indexed")
		}
	})

	t.Run("malformed event is dropped, not retried forever", func(t *testing.T) {
		if err := e.pub.Publish(ctx, events.Event{Subject: changes.Subject(4), MsgID: "bad-" + uniq(),
			Data: []byte(`{"not":"an event"}`)}); err != nil {
			t.Fatal(err)
		}
		upd, err := s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: target, Values: []content.ValueInput{vin(content.AttrName, en, "Target 3")}}})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(t, upd.Transaction.ID)
	})

	t.Run("version", func(t *testing.T) {
		last, err := e.st.LastTransactionID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := e.ix.CurrentVersion(ctx)
		if err != nil || cur != last {
			t.Fatalf("version %d, %v; last transaction %d", cur, err, last)
		}
		if cur, err := e.ix.WaitForVersion(ctx, last+1, 50_000_000); err == nil || cur != last {
			t.Fatalf("wait for a future version: %d, %v (want timeout)", cur, err)
		}
	})
}
