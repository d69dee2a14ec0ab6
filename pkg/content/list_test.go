package content

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

func TestTypedObjectsPaging(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		child := newBranch(t, s, "c", BranchDefault)
		var in []ObjectInput
		for i := range 5 {
			in = append(in, ObjectInput{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, i)}})
		}
		_, parentIDs := must2(t)(s.CreateObjects(ctxBG, "4", editor, in))
		_, childIDs := must2(t)(s.CreateObjects(ctxBG, id(child), editor, in[:2]))
		chk2(s.DeleteObjects(ctxBG, id(child), editor, []string{id(parentIDs[1])}))(t)

		collect := func(branch string, q ListQuery) ([]int64, int) {
			var got []int64
			pages := 0
			for {
				p := chk(s.GetTypedObjects(ctxBG, branch, "article", q))(t)
				pages++
				for _, o := range p.Objects {
					got = append(got, o.ID)
				}
				if p.Continue == "" {
					return got, pages
				}
				q.Continue = p.Continue
			}
		}
		ids, pages := collect(id(child), ListQuery{Take: 3})
		want := append(append([]int64{}, parentIDs...), childIDs...)
		if fmt.Sprint(ids) != fmt.Sprint(want) || pages != 3 {
			t.Fatalf("child pages: %v in %d pages, want %v in 3", ids, pages, want)
		}
		live := false
		ids, _ = collect(id(child), ListQuery{Take: 2, Deleted: &live})
		if len(ids) != 6 {
			t.Fatalf("live objects on child = %v", ids)
		}
		dead := true
		ids, _ = collect(id(child), ListQuery{Deleted: &dead})
		if fmt.Sprint(ids) != fmt.Sprint([]int64{parentIDs[1]}) {
			t.Fatalf("deleted objects on child = %v", ids)
		}
		ids, _ = collect("4", ListQuery{Take: 100})
		if fmt.Sprint(ids) != fmt.Sprint(parentIDs) {
			t.Fatalf("parent objects = %v", ids)
		}
		p := chk(s.GetTypedObjects(ctxBG, "4", "article", ListQuery{Take: 1, ReadOptions: ReadOptions{Attributes: []string{"rank"}}}))(t)
		if len(p.Objects) != 1 || len(p.Objects[0].Values) != 1 {
			t.Fatalf("projected page = %+v", p)
		}
		_, err := s.GetTypedObjects(ctxBG, id(child), "article", ListQuery{Continue: p.Continue})
		wantErr(t, err, ErrInvalid, "token of another list")
		_, err = s.GetTypedObjects(ctxBG, "4", "article", ListQuery{Continue: "garbage!"})
		wantErr(t, err, ErrInvalid, "garbage token")
		_, err = s.GetTypedObjects(ctxBG, "4", "article", ListQuery{Take: -1})
		wantErr(t, err, ErrInvalid, "negative take")
		_, err = s.GetTypedObjects(ctxBG, "4", id(parentIDs[0]), ListQuery{})
		wantErr(t, err, ErrInvalid, "an object that is not a type")
		_, err = s.GetTypedObjects(ctxBG, "4", "article", ListQuery{ReadOptions: ReadOptions{Languages: []string{"noSuchLanguage"}}})
		wantErr(t, err, ErrNotFound, "unknown filter identifier")
	})
}

func TestChangeEvents(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		sc := newSchema(t, s)
		chk(st.ClaimOutbox(ctxBG, 100))(t) // drop bootstrap and schema events
		child := newBranch(t, s, "c", BranchDefault)
		tr, ids := must2(t)(s.CreateObjects(ctxBG, id(child), editor, []ObjectInput{{TypeID: sc.article}, {TypeID: sc.article}}))
		up := chk(s.UpdateObjects(ctxBG, id(child), editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(sc.rank, 0, 1)}}}))(t)
		_, del := chk2(s.DeleteObjects(ctxBG, id(child), editor, []string{id(ids[1])}))(t)
		ev := chk(st.ClaimOutbox(ctxBG, 100))(t)
		want := []changes.Event{
			{Branch: BranchDefault, Kind: "created", ObjectIDs: []int64{child}, User: "editor"},
			{Branch: child, Transaction: tr.ID, Kind: "created", ObjectIDs: ids, User: "editor"},
			{Branch: child, Transaction: up.Transaction.ID, Kind: "updated", ObjectIDs: ids[:1], User: "editor"},
			{Branch: child, Transaction: del.ID, Kind: "deleted", ObjectIDs: ids[1:], User: "editor"},
		}
		if len(ev) != len(want) {
			t.Fatalf("%d events, want %d", len(ev), len(want))
		}
		for i, e := range ev {
			var got changes.Event
			if err := json.Unmarshal(e.Payload, &got); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				want[0].Transaction = e.TxID
			}
			if fmt.Sprint(got) != fmt.Sprint(want[i]) || e.Subject != changes.Subject(got.Branch) ||
				e.MsgID != fmt.Sprintf("tx-%d", e.TxID) || got.Transaction != e.TxID {
				t.Fatalf("event %d = %s %s %s, want %+v", i, e.Subject, e.MsgID, e.Payload, want[i])
			}
		}
		if tr.User != "editor" || tr.Comment != "test" || tr.Branch != child || tr.Time.IsZero() {
			t.Fatalf("transaction record = %+v", tr)
		}
	})
}

// TestParallelWritersLoseNothing: 8 writers update the same object at once,
// each its own attribute plus one shared attribute. Every own attribute ends
// with the writer's last value (no lost update) and the shared one with the
// value of the highest transaction (last writer by transaction order).
func TestParallelWritersLoseNothing(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		const writers, rounds = 8, 5
		var attrs []ObjectInput
		for range writers + 1 {
			attrs = append(attrs, ObjectInput{TypeID: TypeAttribute, Values: []ValueInput{vin(AttrDataType, 0, "Integer")}})
		}
		_, attrIDs := must2(t)(s.CreateObjects(ctxBG, "4", editor, attrs))
		shared := attrIDs[writers]
		sc := newSchema(t, s)
		_, obj := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}}))
		var wg sync.WaitGroup
		var maxTx atomic.Int64
		var maxVal atomic.Int64
		var mu sync.Mutex
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					val := int64(w*100 + r)
					res, err := s.UpdateObjects(ctxBG, "4", Change{Caller: &auth.Principal{Name: fmt.Sprint("w", w)}}, []ObjectInput{{ID: obj[0],
						Values: []ValueInput{vin(attrIDs[w], 0, val), vin(shared, 0, val)}}})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if res.Transaction.ID > maxTx.Load() {
						maxTx.Store(res.Transaction.ID)
						maxVal.Store(val)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		o := chk(s.GetObject(ctxBG, "4", id(obj[0]), ReadOptions{}))(t)
		got := map[int64]string{}
		for _, v := range o.Values {
			got[v.Attribute] = string(v.JSON)
		}
		for w := range writers {
			if want := fmt.Sprint(w*100 + rounds - 1); got[attrIDs[w]] != want {
				t.Errorf("writer %d: value %s, want %s", w, got[attrIDs[w]], want)
			}
		}
		if want := fmt.Sprint(maxVal.Load()); got[shared] != want {
			t.Errorf("shared value %s, want %s from transaction %d", got[shared], want, maxTx.Load())
		}
		if o.LastTransaction != maxTx.Load() {
			t.Errorf("lastTransaction %d, want %d", o.LastTransaction, maxTx.Load())
		}
	})
}

func TestUserDisplayName(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{
			{TypeID: TypeUser, Values: []ValueInput{vin(AttrUserName, 0, "alice"), vin(AttrName, LanguageEnUS, "Alice A."), vin(AttrName, LanguageDeDE, "Alice A.")}},
			{TypeID: TypeUser, Values: []ValueInput{vin(AttrUserName, 0, "bob")}},
			{TypeID: TypeUser, Values: []ValueInput{vin(AttrUserName, 0, "Bob")}},
		}))
		o := chk(s.UserDisplayName(ctxBG, "ALICE"))(t)
		if fmt.Sprint(valuesOf(o)) != `[1000/201/0/0="Alice A." 1000/202/0/0="Alice A."]` || o.TypeID != TypeUser {
			t.Fatalf("alice = %+v", o)
		}
		_, err := s.UserDisplayName(ctxBG, "bob")
		wantErr(t, err, ErrAmbiguous, "two users bob/Bob")
		_, err = s.UserDisplayName(ctxBG, "carol")
		wantErr(t, err, ErrNotFound, "unknown user")
	})
}

// countingStore counts read calls, to show reads cost a fixed number of
// queries whatever the number of objects and the depth of the chain.
type countingStore struct {
	store.Store
	calls atomic.Int64
}

func (c *countingStore) GetObjectsIn(ctx context.Context, b, ids []int64) ([]store.Object, error) {
	c.calls.Add(1)
	return c.Store.GetObjectsIn(ctx, b, ids)
}

func (c *countingStore) ListValuesIn(ctx context.Context, b, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	c.calls.Add(1)
	return c.Store.ListValuesIn(ctx, b, ids, f)
}

func (c *countingStore) FindObjectsIn(ctx context.Context, b []int64, g, a []string) ([]store.Object, error) {
	c.calls.Add(1)
	return c.Store.FindObjectsIn(ctx, b, g, a)
}

func (c *countingStore) ListObjects(ctx context.Context, b int64, q store.ObjectQuery) ([]store.Object, error) {
	c.calls.Add(1)
	return c.Store.ListObjects(ctx, b, q)
}

func (c *countingStore) ListValues(ctx context.Context, b int64, ids []int64, f store.ValueFilter) ([]store.Value, error) {
	c.calls.Add(1)
	return c.Store.ListValues(ctx, b, ids, f)
}

func (c *countingStore) GetObjects(ctx context.Context, b int64, ids []int64) ([]store.Object, error) {
	c.calls.Add(1)
	return c.Store.GetObjects(ctx, b, ids)
}

func (c *countingStore) GetObject(ctx context.Context, b, id int64) (store.Object, error) {
	c.calls.Add(1)
	return c.Store.GetObject(ctx, b, id)
}

func TestReadsAreBatched(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		sc := newSchema(t, s)
		parent := BranchDefault
		for i := range 4 {
			parent = newBranch(t, s, fmt.Sprint("b", i), parent)
		}
		var in []ObjectInput
		for i := range 50 {
			in = append(in, ObjectInput{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, i), vin(sc.title, LanguageEnUS, "t")}})
		}
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, in))
		var idents []string
		for _, x := range ids {
			idents = append(idents, id(x))
		}
		cs := &countingStore{Store: st}
		cs2 := New(cs, nil)
		objs := chk(cs2.GetObjects(ctxBG, id(parent), idents, ReadOptions{Inherited: true, Attributes: []string{"rank", "title"}}))(t)
		if len(objs) != 50 || len(objs[49].Values) != 2 {
			t.Fatalf("read %d objects", len(objs))
		}
		// branch tree (2) + filter resolution (≤2) + ids (1) + objects (1) + values (1)
		if n := cs.calls.Load(); n > 7 {
			t.Fatalf("reading 50 objects through a 5-branch chain took %d store calls", n)
		}
	})
}
