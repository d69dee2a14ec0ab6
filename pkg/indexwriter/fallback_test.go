package indexwriter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store"
)

// fallbackSite is a store with a language fr (fallback de-DE, which falls
// back to en-US), a child branch, and objects named in one language each,
// indexed with display-name fields for en-US, de-DE and fr.
type fallbackSite struct {
	st                   store.Store
	s                    *content.Service
	ix                   *indexwriter.Indexer
	eng                  search.Engine
	fr, child            int64
	en, de, frOnly, both int64 // objects named in en-US, de-DE, fr, en-US + de-DE
	neutral, none        int64 // language-independent name, no name
}

func newFallbackSite(t *testing.T) *fallbackSite {
	t.Helper()
	ctx := context.Background()
	st := bootstrappedStore(t)
	f := &fallbackSite{st: st, s: content.New(st, nil)}
	_, ids, err := f.s.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
		Values: []content.ValueInput{vin(1000, 201, "French"), vin(content.AttrIsoLanguageCode, 0, "fr-FR"),
			vin(content.AttrFallbackLanguage, 0, content.LanguageDeDE)}}})
	if err != nil {
		t.Fatal(err)
	}
	f.fr = ids[0]
	child, _, err := f.s.CreateBranch(ctx, editor, []content.ValueInput{vin(1000, 201, "Child"), vin(4000, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	f.child = child.ID
	_, ids, err = f.s.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.RootID, Values: []content.ValueInput{vin(1000, content.LanguageEnUS, "Alpha")}},
		{TypeID: content.RootID, Values: []content.ValueInput{vin(1000, content.LanguageDeDE, "Beta")}},
		{TypeID: content.RootID, Values: []content.ValueInput{vin(1000, f.fr, "Gamma")}},
		{TypeID: content.RootID, Values: []content.ValueInput{vin(1000, content.LanguageEnUS, "Delta"), vin(1000, content.LanguageDeDE, "Delta DE")}},
		{TypeID: content.RootID},
		{TypeID: content.RootID},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.en, f.de, f.frOnly, f.both, f.neutral, f.none = ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]
	// pkg/content refuses language 0 for the language-dependent attribute
	// 1000, but stores migrated from NovaDB can hold such a name: write one
	// directly, with the change event pkg/content would append.
	tx, err := st.Begin(ctx, store.TxMeta{User: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.PutValues(ctx, store.Value{Branch: 4, ObjectID: f.neutral, AttributeID: 1000, JSON: json.RawMessage(`"Epsilon"`)}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(changes.Event{Branch: 4, Transaction: tx.ID(), ObjectIDs: []int64{f.neutral}, Kind: "updated"})
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.4", MsgID: fmt.Sprintf("tx-%d", tx.ID()), Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if f.eng, err = bleve.New(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.eng.Close() })
	if f.ix, err = indexwriter.New(st, f.eng, indexwriter.Options{Layout: indexdoc.Layout{Languages: []int64{201, 202, f.fr}}, Batch: 5}); err != nil {
		t.Fatal(err)
	}
	drain(t, st, f.ix)
	return f
}

// sortNames returns NameSortField(lang) of the documents of ids on branch
// ("" = absent).
func (f *fallbackSite) sortNames(t *testing.T, branch, lang int64, ids ...int64) []string {
	t.Helper()
	out := make([]string, len(ids))
	for i, id := range ids {
		d, err := f.eng.Get(context.Background(), f.ix.ObjectsIndex(), indexdoc.DocID(branch, id))
		if err != nil {
			t.Fatalf("document %d on %d: %v", id, branch, err)
		}
		out[i], _ = d.Fields[indexdoc.NameSortField(lang)].(string)
	}
	return out
}

func (f *fallbackSite) expect(t *testing.T, branch, lang int64, want ...string) {
	t.Helper()
	got := f.sortNames(t, branch, lang, f.en, f.de, f.frOnly, f.both, f.neutral, f.none)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("branch %d, %s of [en de fr both neutral none] = %q, want %q", branch, indexdoc.NameSortField(lang), got, want)
	}
}

// TestDisplayNameFallback: the per-language display-name fields hold the
// name the language's fallback chain selects (own, fallbacks, then
// language-independent), on every branch, and FieldName keeps the own
// names only.
func TestDisplayNameFallback(t *testing.T) {
	f := newFallbackSite(t)
	for _, b := range []int64{4, f.child} {
		f.expect(t, b, content.LanguageEnUS, "alpha", "", "", "delta", "epsilon", "")
		f.expect(t, b, content.LanguageDeDE, "alpha", "beta", "", "delta de", "epsilon", "")
		f.expect(t, b, f.fr, "alpha", "beta", "gamma", "delta de", "epsilon", "")
	}
	d, err := f.eng.Get(context.Background(), f.ix.ObjectsIndex(), indexdoc.DocID(4, f.en))
	if err != nil {
		t.Fatal(err)
	}
	if d.Fields[indexdoc.NameField(content.LanguageDeDE)] != "Alpha" || d.Fields[indexdoc.NameTextField(f.fr)] != "Alpha" ||
		fmt.Sprint(d.Fields[indexdoc.FieldName]) != "[201=Alpha]" {
		t.Errorf("fields of the en-US object: name_202=%v nameText_fr=%v name=%v", d.Fields[indexdoc.NameField(content.LanguageDeDE)],
			d.Fields[indexdoc.NameTextField(f.fr)], d.Fields[indexdoc.FieldName])
	}
}

// TestDisplayNameFallbackChange: changing a language's fallback rebuilds
// the documents already indexed, on the branch changed and the branches
// inheriting from it, and only there.
func TestDisplayNameFallbackChange(t *testing.T) {
	ctx := context.Background()
	f := newFallbackSite(t)
	update := func(branch string, fallback any) {
		t.Helper()
		if _, err := f.s.UpdateObjects(ctx, branch, editor, []content.ObjectInput{{ID: f.fr,
			Values: []content.ValueInput{vin(content.AttrFallbackLanguage, 0, fallback)}}}); err != nil {
			t.Fatal(err)
		}
		drain(t, f.st, f.ix)
	}
	// On the child only: fr → en-US there, fr → de-DE on branch 4.
	update(fmt.Sprint(f.child), content.LanguageEnUS)
	f.expect(t, f.child, f.fr, "alpha", "", "gamma", "delta", "epsilon", "")
	f.expect(t, 4, f.fr, "alpha", "beta", "gamma", "delta de", "epsilon", "")
	// On branch 4: no fallback; the child keeps its own.
	update("4", nil)
	f.expect(t, 4, f.fr, "", "", "gamma", "", "epsilon", "")
	f.expect(t, f.child, f.fr, "alpha", "", "gamma", "delta", "epsilon", "")
	// Replaying every event changes nothing (idempotent, no stale writes).
	before := f.sortNames(t, f.child, f.fr, f.en, f.both)
	last, err := f.ix.CurrentVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ix.Apply(ctx, changes.Event{Branch: 4, Transaction: last, ObjectIDs: []int64{f.fr}, Kind: "updated"}); err != nil {
		t.Fatal(err)
	}
	if after := f.sortNames(t, f.child, f.fr, f.en, f.both); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after replay %q, before %q", after, before)
	}
	// en-US and de-DE did not change.
	f.expect(t, 4, content.LanguageDeDE, "alpha", "beta", "", "delta de", "epsilon", "")
}

// TestDisplayNameFallbackUnchangedNoRebuild: an event on a language that
// changes no chain rewrites only its objects.
func TestDisplayNameFallbackUnchangedNoRebuild(t *testing.T) {
	ctx := context.Background()
	f := newFallbackSite(t)
	// Renaming a language does not change any chain: only the event's
	// objects are rewritten.
	if _, err := f.s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: f.fr,
		Values: []content.ValueInput{vin(1000, content.LanguageEnUS, "French (France)")}}}); err != nil {
		t.Fatal(err)
	}
	evs, err := f.st.ClaimOutbox(ctx, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	res, err := f.ix.ApplyPayload(ctx, evs[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	// One document per branch (4 and the child).
	if res.Ops != 2 {
		t.Errorf("renaming a language wrote %d ops, want 2", res.Ops)
	}
}

// flaky fails every Bulk that writes the document failOn.
type flaky struct {
	search.Engine
	failOn string
}

var errFlaky = errors.New("flaky engine: bulk failed")

func (e *flaky) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	for _, op := range ops {
		if e.failOn != "" && op.Doc.ID == e.failOn {
			return search.BulkResult{}, errFlaky
		}
	}
	return e.Engine.Bulk(ctx, index, ops)
}

// TestDisplayNameFallbackRetry: an Apply that fails half-way through the
// rebuild a fallback change causes leaves the language documents old, so
// the retry (the event redelivered) rebuilds again and nothing stays stale.
func TestDisplayNameFallbackRetry(t *testing.T) {
	ctx := context.Background()
	f := newFallbackSite(t)
	fl := &flaky{Engine: f.eng}
	// Batches of 2: the language's own document (an earlier id) is in
	// an earlier batch than the first named object, whose write fails.
	ix, err := indexwriter.New(f.st, fl, indexwriter.Options{Layout: indexdoc.Layout{Languages: []int64{201, 202, f.fr}}, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	f.ix = ix
	if _, err := f.s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: f.fr,
		Values: []content.ValueInput{vin(content.AttrFallbackLanguage, 0, content.LanguageEnUS)}}}); err != nil {
		t.Fatal(err)
	}
	evs, err := f.st.ClaimOutbox(ctx, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	fl.failOn = indexdoc.DocID(4, f.en)
	if _, err := ix.ApplyPayload(ctx, evs[0].Payload); !errors.Is(err, errFlaky) {
		t.Fatalf("apply with a failing engine: %v", err)
	}
	fl.failOn = ""
	if _, err := ix.ApplyPayload(ctx, evs[0].Payload); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{4, f.child} {
		f.expect(t, b, f.fr, "alpha", "", "gamma", "delta", "epsilon", "")
	}
}

// TestDisplayNameFallbackNewLanguage: a language with name fields
// (Options.Languages) created after documents were indexed gets its
// fallback in those documents too.
func TestDisplayNameFallbackNewLanguage(t *testing.T) {
	ctx := context.Background()
	st := bootstrappedStore(t)
	_, ids, err := content.New(st, nil).CreateObjects(ctx, "4", editor, []content.ObjectInput{
		{TypeID: content.RootID, Values: []content.ValueInput{vin(1000, content.LanguageEnUS, "Alpha")}}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	const lang = 900000 // created below, with a fixed id the options can name
	ix, err := indexwriter.New(st, eng, indexwriter.Options{Layout: indexdoc.Layout{Languages: []int64{201, 202, lang}}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	name := func() any {
		t.Helper()
		d, err := eng.Get(ctx, ix.ObjectsIndex(), indexdoc.DocID(4, ids[0]))
		if err != nil {
			t.Fatal(err)
		}
		return d.Fields[indexdoc.NameSortField(lang)]
	}
	if n := name(); n != nil {
		t.Fatalf("before the language exists: %v", n)
	}
	// pkg/content allocates ids itself: write the language directly, with
	// the change event pkg/content would append.
	tx, err := st.Begin(ctx, store.TxMeta{User: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.PutObjects(ctx, store.Object{ID: lang, Branch: 4, TypeID: content.TypeLanguage, GUID: "4c8f0e1a-0000-4000-8000-000000000001"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.PutValues(ctx,
		store.Value{Branch: 4, ObjectID: lang, AttributeID: content.AttrIsoLanguageCode, JSON: json.RawMessage(`"fr-FR"`)},
		store.Value{Branch: 4, ObjectID: lang, AttributeID: content.AttrFallbackLanguage, JSON: json.RawMessage(`201`)}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(changes.Event{Branch: 4, Transaction: tx.ID(), ObjectIDs: []int64{lang}, Kind: "created"})
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.4", MsgID: fmt.Sprintf("tx-%d", tx.ID()), Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	drain(t, st, ix)
	if n := name(); n != "alpha" {
		t.Fatalf("after the language (fallback en-US) was created: %v, want alpha", n)
	}
}

// hookStore runs hook once, right after the first read of language
// fallbacks (attribute 2002) returns.
type hookStore struct {
	store.Reader
	hook func()
}

func (h *hookStore) ListValuesIn(ctx context.Context, branches, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	vals, err := h.Reader.ListValuesIn(ctx, branches, ids, f)
	if hook := h.hook; hook != nil && len(f.AttributeIDs) == 1 && f.AttributeIDs[0] == content.AttrFallbackLanguage {
		h.hook = nil
		hook()
	}
	return vals, err
}

// TestDisplayNameFallbackChangedDuringApply: a fallback change committed
// while an earlier event on the same language is applied must not leave
// that language's document ahead of the documents built with the old
// fallback (its own event would then find nothing to rebuild).
func TestDisplayNameFallbackChangedDuringApply(t *testing.T) {
	ctx := context.Background()
	f := newFallbackSite(t)
	hs := &hookStore{Reader: f.st}
	ix, err := indexwriter.New(hs, f.eng, indexwriter.Options{Layout: indexdoc.Layout{Languages: []int64{201, 202, f.fr}}})
	if err != nil {
		t.Fatal(err)
	}
	f.ix = ix
	if _, err := f.s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: f.fr,
		Values: []content.ValueInput{vin(1000, content.LanguageEnUS, "French (France)")}}}); err != nil {
		t.Fatal(err)
	}
	evs, err := f.st.ClaimOutbox(ctx, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	hs.hook = func() {
		if _, err := f.s.UpdateObjects(ctx, "4", editor, []content.ObjectInput{{ID: f.fr,
			Values: []content.ValueInput{vin(content.AttrFallbackLanguage, 0, content.LanguageEnUS)}}}); err != nil {
			t.Error(err)
		}
	}
	if _, err := ix.ApplyPayload(ctx, evs[0].Payload); err != nil {
		t.Fatal(err)
	}
	if hs.hook != nil {
		t.Fatal("the hook did not run")
	}
	if err := f.st.AckOutbox(ctx, []int64{evs[0].ID}); err != nil {
		t.Fatal(err)
	}
	drain(t, f.st, ix) // the fallback change's own event
	for _, b := range []int64{4, f.child} {
		f.expect(t, b, f.fr, "alpha", "", "gamma", "delta", "epsilon", "")
	}
}
