package content

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

// entryKeys renders history entries as "tx kind attr:old>new; …".
func entryKeys(es []HistoryEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		s := fmt.Sprintf("%d %s", e.Transaction.ID, e.Kind)
		for _, c := range e.Changes {
			side := func(vs []Value) string {
				parts := make([]string, len(vs))
				for j, v := range vs {
					parts[j] = string(v.JSON)
				}
				return strings.Join(parts, ",")
			}
			s += fmt.Sprintf(" %d/%d:%s>%s", c.Attribute, c.Language, side(c.Old), side(c.New))
		}
		out[i] = s
	}
	return out
}

// TestObjectHistory: the transactions that changed an object, newest
// first, with old and new values, paged; a comment is no change; asOf
// reads the object as a transaction left it.
func TestObjectHistory(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		t1, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article,
			Values: []ValueInput{vin(sc.title, LanguageEnUS, "One"), vin(sc.rank, 0, 7)}}}))
		a := ids[0]
		t2 := chk(s.UpdateObjects(ctxBG, "4", Change{Caller: &auth.Principal{Name: "bob"}, Comment: "rank up"},
			[]ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 8)}}}))(t).Transaction
		if _, err := s.CreateComment(ctxBG, Actor{Caller: editor.Caller}, BranchDefault, a,
			`<div xmlns="http://www.w3.org/1999/xhtml"><p>looks good</p></div>`); err != nil {
			t.Fatal(err)
		}
		_, t3, err := s.DeleteObjects(ctxBG, "4", editor, []string{id(a)})
		if err != nil {
			t.Fatal(err)
		}
		page := chk(s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{}))(t)
		want := []string{
			fmt.Sprintf("%d deleted", t3.ID),
			fmt.Sprintf("%d updated %d/0:7>8", t2.ID, sc.rank),
			fmt.Sprintf("%d created %d/%d:>\"One\" %d/0:>7", t1.ID, sc.title, LanguageEnUS, sc.rank),
		}
		if got := entryKeys(page.Entries); fmt.Sprint(got) != fmt.Sprint(want) || page.Continue != "" {
			t.Fatalf("history:\n got %q (continue %q)\nwant %q", got, page.Continue, want)
		}
		if e := page.Entries[1]; e.Transaction.User != "bob" || e.Transaction.Comment != "rank up" || e.Transaction.Time.IsZero() {
			t.Fatalf("transaction of the update: %+v", e.Transaction)
		}

		// One entry a page; the old value of the page's oldest entry comes
		// from before the page.
		var got []string
		tok := ""
		for range 4 {
			p := chk(s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{Take: 1, Continue: tok}))(t)
			got = append(got, entryKeys(p.Entries)...)
			if tok = p.Continue; tok == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("paged history:\n got %q\nwant %q", got, want)
		}
		first := chk(s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{Take: 1}))(t)
		_, err = s.ObjectHistory(ctxBG, "4", id(sc.article), HistoryQuery{Continue: first.Continue})
		wantErr(t, err, ErrInvalid, "a token of another object's history")
		_, err = s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{Take: MaxHistoryTake + 1})
		wantErr(t, err, ErrInvalid, "take beyond the maximum")
		_, err = s.ObjectHistory(ctxBG, "4", "999999", HistoryQuery{})
		wantErr(t, err, ErrNotFound, "history of an unknown object")

		// As of each transaction.
		at := func(tx int64) (Object, error) { return s.GetObject(ctxBG, "4", id(a), ReadOptions{AsOf: tx}) }
		if o := chk(at(t1.ID))(t); o.Deleted || fmt.Sprint(valuesOf(o)) != fmt.Sprintf("[%d/%d/0/0=\"One\" %d/0/0/0=7]", sc.title, LanguageEnUS, sc.rank) {
			t.Fatalf("as of %d: deleted %v, %v", t1.ID, o.Deleted, valuesOf(o))
		}
		if o := chk(at(t2.ID))(t); o.Deleted || o.Version != t2.ID {
			t.Fatalf("as of %d: deleted %v, version %d", t2.ID, o.Deleted, o.Version)
		}
		if o := chk(at(t3.ID))(t); !o.Deleted {
			t.Fatalf("as of %d: not deleted", t3.ID)
		}
		_, err = at(t1.ID - 1)
		wantErr(t, err, ErrNotFound, "as of before the object was created")
		_, err = at(t3.ID + 1000)
		wantErr(t, err, ErrInvalid, "as of a transaction beyond the newest")
		_, err = at(-1)
		wantErr(t, err, ErrInvalid, "as of a negative transaction")
		objs := chk(s.GetObjects(ctxBG, "4", []string{id(a), id(sc.article)}, ReadOptions{AsOf: t1.ID - 1, SkipMissing: true}))(t)
		if len(objs) != 1 || objs[0].ID != sc.article {
			t.Fatalf("GetObjects skipping what did not exist yet: %v", objs)
		}
	})
}

// TestRevertObjects: a revert is one new transaction restoring the state
// of then (all values, or some attributes), a deleted object comes back,
// the versions in between stay in the history.
func TestRevertObjects(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		t1, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.title, LanguageEnUS, "One"), vin(sc.rank, 0, 7)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}},
		}))
		a, b := ids[0], ids[1]
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{
			vin(sc.title, LanguageEnUS, "Two"), vin(sc.rank, 0, 8), {Attribute: sc.related, JSON: js(b)}}}}))(t)
		if _, _, err := s.DeleteObjects(ctxBG, "4", editor, []string{id(a)}); err != nil {
			t.Fatal(err)
		}

		res := chk(s.RevertObjects(ctxBG, "4", Change{Caller: editor.Caller, Comment: "oops"},
			RevertInput{Objects: []string{id(a)}, Transaction: t1.ID}))(t)
		if res.RevertedObjects != 1 || res.Transaction.Comment != fmt.Sprintf("oops [reverted object %d to transaction %d]", a, t1.ID) {
			t.Fatalf("revert: %+v", res)
		}
		o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t)
		if o.Deleted || fmt.Sprint(valuesOf(o)) != fmt.Sprintf("[%d/%d/0/0=\"One\" %d/0/0/0=7]", sc.title, LanguageEnUS, sc.rank) {
			t.Fatalf("after the revert: deleted %v, %v", o.Deleted, valuesOf(o))
		}
		h := chk(s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{}))(t)
		if len(h.Entries) != 4 || h.Entries[0].Transaction.ID != res.Transaction.ID || h.Entries[0].Kind != HistoryRestored ||
			len(h.Entries[0].Changes) != 3 {
			t.Fatalf("history after the revert: %q", entryKeys(h.Entries))
		}

		// Some attributes only; the object row is left alone.
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{
			vin(sc.title, LanguageEnUS, "Three"), vin(sc.rank, 0, 9)}}}))(t)
		res = chk(s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(a)}, Transaction: t1.ID,
			Attributes: []string{"rank"}}))(t)
		if !strings.HasSuffix(res.Transaction.Comment, fmt.Sprintf("(attributes %d)]", sc.rank)) {
			t.Fatalf("comment of an attribute revert: %q", res.Transaction.Comment)
		}
		o = chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t)
		if fmt.Sprint(valuesOf(o)) != fmt.Sprintf("[%d/%d/0/0=\"Three\" %d/0/0/0=7]", sc.title, LanguageEnUS, sc.rank) {
			t.Fatalf("after the attribute revert: %v", valuesOf(o))
		}

		// Both objects in one transaction; b did not change, so one counts.
		res = chk(s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(a), id(b)}, Transaction: t1.ID}))(t)
		if res.RevertedObjects != 1 {
			t.Fatalf("batch revert changed %d objects, want 1", res.RevertedObjects)
		}
		_, err := s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(a)}, Transaction: t1.ID - 1})
		wantErr(t, err, ErrNotFound, "a revert to before the object existed")
		_, err = s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(a)}, Transaction: res.Transaction.ID + 100})
		wantErr(t, err, ErrInvalid, "a revert to a transaction beyond the newest")
		_, err = s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(a)}, Transaction: t1.ID, Attributes: []string{id(b)}})
		wantErr(t, err, ErrInvalid, "an attribute list naming an article")
		_, err = s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: make([]string, MaxRevertObjects+1), Transaction: t1.ID})
		wantErr(t, err, ErrInvalid, "too many objects")
		_, err = s.RevertObjects(ctxBG, "4", editor, RevertInput{Objects: []string{id(BranchDefault)}, Transaction: t1.ID})
		wantErr(t, err, ErrInvalid, "a revert of a branch")
	})
}

// TestHistoryRetention: with a retention, reads as of an older transaction
// are refused and PruneHistory drops the superseded versions.
func TestHistoryRetention(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		sc := newSchema(t, s)
		t1, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article,
			Values: []ValueInput{vin(sc.rank, 0, 7)}}}))
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(sc.rank, 0, 8)}}}))(t)
		if n, _, err := s.PruneHistory(ctxBG, time.Now().Add(time.Hour), 0); n != 0 || err != nil {
			t.Fatalf("without a retention PruneHistory deleted %d (%v)", n, err)
		}
		kept := New(st, nil, WithHistoryRetention(time.Minute))
		if _, err := kept.GetObject(ctxBG, "4", id(ids[0]), ReadOptions{AsOf: t1.ID}); err != nil {
			t.Fatalf("as of a transaction within the retention: %v", err)
		}
		later := time.Now().Add(2 * time.Minute)
		total, after := 0, int64(0)
		for {
			n, next, err := kept.PruneHistory(ctxBG, later, after)
			if err != nil {
				t.Fatal(err)
			}
			total += n
			if after = next; after == 0 {
				break
			}
		}
		if total == 0 {
			t.Fatal("PruneHistory deleted nothing")
		}
		// The creation's row and the update's value are the newest of
		// their kind and stay; the created rank 7 is gone.
		h := chk(kept.ObjectHistory(ctxBG, "4", id(ids[0]), HistoryQuery{}))(t)
		if got, want := fmt.Sprint(entryKeys(h.Entries)), fmt.Sprint([]string{
			fmt.Sprintf("%d updated %d/0:>8", t1.ID+1, sc.rank), fmt.Sprintf("%d created", t1.ID)}); got != want {
			t.Fatalf("history after pruning:\n got %s\nwant %s", got, want)
		}
		if o := chk(kept.GetObject(ctxBG, "4", id(ids[0]), ReadOptions{}))(t); fmt.Sprint(valuesOf(o)) != fmt.Sprintf("[%d/0/0/0=8]", sc.rank) {
			t.Fatalf("the present after pruning: %v", valuesOf(o))
		}
		short := New(st, nil, WithHistoryRetention(time.Nanosecond))
		_, err := short.GetObject(ctxBG, "4", id(ids[0]), ReadOptions{AsOf: t1.ID})
		wantErr(t, err, ErrInvalid, "as of a transaction older than the retention")
	})
}

// TestHistoryOnChildBranch: a child's history holds what the child stores
// (its overrides), asOf with inherited reads the chain as of then, and a
// revert on the child to before its override drops the override, so the
// parent's value shows again.
func TestHistoryOnChildBranch(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article,
			Values: []ValueInput{vin(sc.rank, 0, 1)}}}))
		a := ids[0]
		child := newBranch(t, s, "Release", BranchDefault)
		before := chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 2)}}}))(t).Transaction
		over := chk(s.UpdateObjects(ctxBG, id(child), editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 10)}}}))(t).Transaction
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 3)}}}))(t)

		h := chk(s.ObjectHistory(ctxBG, id(child), id(a), HistoryQuery{}))(t)
		if got, want := fmt.Sprint(entryKeys(h.Entries)), fmt.Sprint([]string{fmt.Sprintf("%d updated %d/0:>10", over.ID, sc.rank)}); got != want {
			t.Fatalf("the child's history: got %s, want %s", got, want)
		}
		if h := chk(s.ObjectHistory(ctxBG, "4", id(a), HistoryQuery{}))(t); len(h.Entries) != 3 {
			t.Fatalf("the parent's history: %q", entryKeys(h.Entries))
		}
		rank := func(o Object) string { return fmt.Sprint(valuesOf(o)) }
		if o := chk(s.GetObject(ctxBG, id(child), id(a), ReadOptions{Inherited: true, AsOf: before.ID}))(t); rank(o) != fmt.Sprintf("[%d/0/0/0=2]", sc.rank) {
			t.Fatalf("inherited as of %d: %s", before.ID, rank(o))
		}
		if o := chk(s.GetObject(ctxBG, id(child), id(a), ReadOptions{Inherited: true, AsOf: over.ID}))(t); rank(o) != fmt.Sprintf("[%d/0/0/0=10]", sc.rank) {
			t.Fatalf("inherited as of %d: %s", over.ID, rank(o))
		}

		res := chk(s.RevertObjects(ctxBG, id(child), editor, RevertInput{Objects: []string{id(a)}, Transaction: before.ID}))(t)
		if res.RevertedObjects != 1 {
			t.Fatalf("revert on the child: %+v", res)
		}
		if o := chk(s.GetObject(ctxBG, id(child), id(a), ReadOptions{Inherited: true}))(t); rank(o) != fmt.Sprintf("[%d/0/0/0=3]", sc.rank) {
			t.Fatalf("on the child after the revert: %s (want the parent's 3)", rank(o))
		}
		if o := chk(s.GetObject(ctxBG, "4", id(a), ReadOptions{}))(t); rank(o) != fmt.Sprintf("[%d/0/0/0=3]", sc.rank) {
			t.Fatalf("the parent after the child's revert: %s", rank(o))
		}
	})
}

// TestUserHistoryIsTheirs: a user object's history is read by
// administrators and by the user itself, never shows the password hash,
// and a user is not reverted.
func TestUserHistoryIsTheirs(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		if !chk(s.EnsureUser(ctxBG, UserSpec{Name: "someone", Password: "a-long-password"}))(t) {
			t.Fatal("EnsureUser wrote nothing")
		}
		user := chk(s.GetTypedObjects(ctxBG, "4", id(TypeUser), ListQuery{Take: 10}))(t).Objects[0].ID
		_, err := s.ObjectHistory(ctxBG, "4", id(user), HistoryQuery{Caller: &auth.Principal{Name: "reader", UserID: 424242}})
		wantErr(t, err, ErrNotFound, "another user's history")
		for _, p := range []*auth.Principal{{Name: "someone", UserID: user}, {Name: "admin", Admin: true}} {
			h := chk(s.ObjectHistory(ctxBG, "4", id(user), HistoryQuery{Caller: p}))(t)
			if len(h.Entries) == 0 || h.Entries[len(h.Entries)-1].Kind != HistoryCreated {
				t.Fatalf("%s reads the user's history: %q", p.Name, entryKeys(h.Entries))
			}
			for _, e := range h.Entries {
				for _, c := range e.Changes {
					if c.Attribute == AttrUserPassword {
						t.Fatalf("the history shows the password hash: %q", entryKeys(h.Entries))
					}
				}
			}
		}
		last := chk(s.st.LastTransactionID(ctxBG))(t)
		_, err = s.RevertObjects(ctxBG, "4", adminCh, RevertInput{Objects: []string{id(user)}, Transaction: last})
		wantErr(t, err, ErrInvalid, "a revert of a user")
	})
}

// TestRevertKeepsSystemObjectsProtected: a revert that would change a
// protected value of a system object is refused, as every write is; a
// configurable one (a language's name) is reverted.
func TestRevertKeepsSystemObjectsProtected(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		before := chk(st.LastTransactionID(ctxBG))(t)
		// A protected value changed behind the domain's back (only the
		// store can): reverting it would be a second such write.
		tx := chk(st.Begin(ctxBG, store.TxMeta{User: "test"}))(t)
		if err := tx.PutValues(ctxBG, store.Value{ObjectID: TypeLanguage, Branch: BranchDefault, AttributeID: AttrName,
			Language: LanguageEnUS, JSON: js("Tampered")}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctxBG); err != nil {
			t.Fatal(err)
		}
		_, err := s.RevertObjects(ctxBG, "4", adminCh, RevertInput{Objects: []string{id(TypeLanguage)}, Transaction: before})
		wantErr(t, err, ErrInvalid, "a revert of a protected value")

		named := chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: LanguageEnUS,
			Values: []ValueInput{vin(AttrName, LanguageEnUS, "American English")}}}))(t).Transaction
		res := chk(s.RevertObjects(ctxBG, "4", adminCh, RevertInput{Objects: []string{id(LanguageEnUS)}, Transaction: named.ID - 1}))(t)
		if res.RevertedObjects != 1 {
			t.Fatalf("a revert of a language's name: %+v", res)
		}
	})
}

// TestTypedListAsOf: a typed list as of a transaction holds the objects
// that existed then, as they were, deleted as they were then.
func TestTypedListAsOf(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		t1, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 2)}}}))
		if _, _, err := s.DeleteObjects(ctxBG, "4", editor, []string{id(ids[0])}); err != nil {
			t.Fatal(err)
		}
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[1], Values: []ValueInput{vin(sc.rank, 0, 20)}}}))(t)
		must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 3)}}}))
		list := func(q ListQuery) string {
			t.Helper()
			var out []string
			for {
				p := chk(s.GetTypedObjects(ctxBG, "4", "article", q))(t)
				for _, o := range p.Objects {
					out = append(out, fmt.Sprintf("%v%v", o.Deleted, valuesOf(o)))
				}
				if q.Continue = p.Continue; q.Continue == "" {
					return fmt.Sprint(out)
				}
			}
		}
		r := func(n int) string { return fmt.Sprintf("[%d/0/0/0=%d]", sc.rank, n) }
		if got, want := list(ListQuery{ReadOptions: ReadOptions{AsOf: t1.ID}, Take: 1}), fmt.Sprint([]string{"false" + r(1), "false" + r(2)}); got != want {
			t.Fatalf("as of %d: got %s, want %s", t1.ID, got, want)
		}
		live := false
		if got, want := list(ListQuery{ReadOptions: ReadOptions{AsOf: t1.ID + 2}, Deleted: &live}), fmt.Sprint([]string{"false" + r(20)}); got != want {
			t.Fatalf("live as of %d: got %s, want %s", t1.ID+2, got, want)
		}
		if got := list(ListQuery{}); got != fmt.Sprint([]string{"true" + r(1), "false" + r(20), "false" + r(3)}) {
			t.Fatalf("now: %s", got)
		}
		_, err := s.GetTypedObjects(ctxBG, "4", "article", ListQuery{ReadOptions: ReadOptions{AsOf: t1.ID + 100}})
		wantErr(t, err, ErrInvalid, "a typed list as of a transaction beyond the newest")
	})
}
