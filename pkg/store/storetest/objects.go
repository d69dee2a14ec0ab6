package storetest

import (
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func testObjectRoundTrip(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var a, b int64
	tx1 := write(t, s, func(tx store.Tx) {
		newIDs, err := tx.NewObjectIDs(ctx, 2)
		must(t, err)
		a, b = newIDs[0], newIDs[1]
		must(t, tx.PutObjects(ctx,
			obj(a, 0, 3000001, "0b3c1e52-a", "myThing"),
			obj(b, 0, 3000001, "0b3c1e52-b", "")))
	})
	want := store.Object{ID: a, Branch: 0, TypeID: 3000001, GUID: "0b3c1e52-a", APIIdentifier: "myThing", CreatedTx: tx1, ModifiedTx: tx1}
	got, err := s.GetObject(ctx, 0, a)
	must(t, err)
	if got != want {
		t.Fatalf("GetObject = %+v, want %+v", got, want)
	}
	got, err = s.GetObject(ctx, 0, b)
	must(t, err)
	if got.APIIdentifier != "" || got.GUID != "0b3c1e52-b" {
		t.Fatalf("object without API identifier = %+v", got)
	}
	_, err = s.GetObject(ctx, 0, b+1000)
	mustBe(t, err, store.ErrNotFound, "GetObject of unknown id")
	_, err = s.GetObject(ctx, 5, a)
	mustBe(t, err, store.ErrNotFound, "GetObject on another branch")

	// Update: CreatedTx stays, ModifiedTx moves, caller's tx fields ignored.
	tx2 := write(t, s, func(tx store.Tx) {
		o := want
		o.TypeID = 3000002
		o.CreatedTx, o.ModifiedTx = 999, 999
		must(t, tx.PutObjects(ctx, o))
	})
	got, err = s.GetObject(ctx, 0, a)
	must(t, err)
	if got.CreatedTx != tx1 || got.ModifiedTx != tx2 || got.TypeID != 3000002 {
		t.Fatalf("after update: %+v (tx1=%d tx2=%d)", got, tx1, tx2)
	}

	// Same id, GUID and API identifier on another branch: a separate row.
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(a, 4, 3000001, "0b3c1e52-a", "myThing")))
	})
	onBranch, err := s.GetObject(ctx, 4, a)
	must(t, err)
	root, err := s.GetObject(ctx, 0, a)
	must(t, err)
	if onBranch.Branch != 4 || root.Branch != 0 || root.TypeID != 3000002 || onBranch.TypeID != 3000001 {
		t.Fatalf("branch rows mixed up: root %+v branch %+v", root, onBranch)
	}

	// Invalid input.
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	defer func() { _ = tx.Rollback() }()
	mustBe(t, tx.PutObjects(ctx, obj(a+50, 0, 1, "", "")), store.ErrInvalidArgument, "empty GUID")
	mustBe(t, tx.PutObjects(ctx, obj(0, 0, 1, "g-zero", "")), store.ErrInvalidArgument, "id 0")
	_, err = tx.NewObjectIDs(ctx, -1)
	mustBe(t, err, store.ErrInvalidArgument, "NewObjectIDs(-1)")
}

func testObjectIDAllocation(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var first, second []int64
	write(t, s, func(tx store.Tx) {
		var err error
		first, err = tx.NewObjectIDs(ctx, 3)
		must(t, err)
		second, err = tx.NewObjectIDs(ctx, 2)
		must(t, err)
	})
	all := append(append([]int64{}, first...), second...)
	for i, id := range all {
		if id <= 0 || (i > 0 && id <= all[i-1]) {
			t.Fatalf("ids not positive and increasing: %v", all)
		}
	}
	// An explicit id beyond the counter pushes the counter past it.
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(3000000, 0, 1, "g-fixed", "")))
		next, err := tx.NewObjectIDs(ctx, 1)
		must(t, err)
		if next[0] <= 3000000 {
			t.Fatalf("id after explicit 3000000 = %d", next[0])
		}
	})
	write(t, s, func(tx store.Tx) {
		next, err := tx.NewObjectIDs(ctx, 1)
		must(t, err)
		if next[0] <= 3000001 {
			t.Fatalf("id in the next tx = %d, want > 3000001", next[0])
		}
	})
}

func testGetObjectsBatchOrder(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		for _, id := range []int64{10, 20, 30, 40} {
			must(t, tx.PutObjects(ctx, obj(id, 0, 1, "g-"+string(rune('a'+id/10)), "")))
		}
		must(t, tx.PutObjects(ctx, obj(50, 9, 1, "g-other-branch", "")))
	})
	got, err := s.GetObjects(ctx, 0, []int64{30, 10, 999, 40, 50, 10})
	must(t, err)
	eqIDs(t, "GetObjects", ids(got), []int64{30, 10, 40, 10})
	for _, o := range got {
		if o.Branch != 0 || o.GUID == "" {
			t.Fatalf("bad row %+v", o)
		}
	}
	got, err = s.GetObjects(ctx, 0, nil)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("GetObjects(nil) = %+v", got)
	}
	// Large batches are still one call and complete.
	var many []int64
	write(t, s, func(tx store.Tx) {
		newIDs, err := tx.NewObjectIDs(ctx, 1500)
		must(t, err)
		objs := make([]store.Object, len(newIDs))
		for i, id := range newIDs {
			objs[i] = obj(id, 0, 2, "bulk-"+strconv.FormatInt(id, 10), "")
		}
		must(t, tx.PutObjects(ctx, objs...))
		many = newIDs
	})
	rev := make([]int64, len(many))
	for i, id := range many {
		rev[len(many)-1-i] = id
	}
	got, err = s.GetObjects(ctx, 0, rev)
	must(t, err)
	eqIDs(t, "GetObjects(1500 reversed)", ids(got), rev)
}

func testUniqueConflicts(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(1, 0, 1, "guid-1", "api1"), obj(2, 0, 1, "guid-2", "")))
	})
	cases := []struct {
		name string
		o    store.Object
	}{
		{"GUID of another object", obj(3, 0, 1, "guid-1", "")},
		{"API identifier of another object", obj(3, 0, 1, "guid-3", "api1")},
		{"update to a taken GUID", obj(2, 0, 1, "guid-1", "")},
		{"update to a taken API identifier", obj(2, 0, 1, "guid-2", "api1")},
	}
	for _, c := range cases {
		tx, err := s.Begin(ctx, store.TxMeta{})
		must(t, err)
		mustBe(t, tx.PutObjects(ctx, c.o), store.ErrConflict, c.name)
		must(t, tx.Rollback())
	}
	// Nothing changed, and several objects without API identifier coexist.
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx, obj(3, 0, 1, "guid-3", ""), obj(4, 0, 1, "guid-4", "")))
	})
	got, err := s.GetObjects(ctx, 0, []int64{1, 2, 3, 4})
	must(t, err)
	if len(got) != 4 || got[0].APIIdentifier != "api1" || got[1].GUID != "guid-2" {
		t.Fatalf("after conflicts: %+v", got)
	}
}

func testFindAndListObjects(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	write(t, s, func(tx store.Tx) {
		must(t, tx.PutObjects(ctx,
			obj(1, 0, 100, "g1", "one"), obj(2, 0, 200, "g2", "two"), obj(3, 0, 100, "g3", ""),
			obj(4, 0, 100, "g4", "four"), obj(5, 0, 300, "g5", ""), obj(6, 7, 100, "g6", "")))
	})
	write(t, s, func(tx store.Tx) {
		_, err := tx.DeleteObjects(ctx, 0, []int64{3})
		must(t, err)
	})
	found, err := s.FindObjects(ctx, 0, []string{"g4", "nope", "g1"}, []string{"two", "one"})
	must(t, err)
	eqIDs(t, "FindObjects", ids(found), []int64{1, 2, 4})
	found, err = s.FindObjects(ctx, 0, nil, []string{"four"})
	must(t, err)
	eqIDs(t, "FindObjects by API identifier", ids(found), []int64{4})
	found, err = s.FindObjects(ctx, 0, []string{"g6"}, nil)
	must(t, err)
	eqIDs(t, "FindObjects on the wrong branch", ids(found), nil)

	all, err := s.ListObjects(ctx, 0, store.ObjectQuery{})
	must(t, err)
	eqIDs(t, "ListObjects all", ids(all), []int64{1, 2, 3, 4, 5})
	typed, err := s.ListObjects(ctx, 0, store.ObjectQuery{TypeIDs: []int64{100, 300}})
	must(t, err)
	eqIDs(t, "ListObjects by type", ids(typed), []int64{1, 3, 4, 5})
	no, yes := false, true
	live, err := s.ListObjects(ctx, 0, store.ObjectQuery{TypeIDs: []int64{100}, Deleted: &no})
	must(t, err)
	eqIDs(t, "ListObjects live", ids(live), []int64{1, 4})
	dead, err := s.ListObjects(ctx, 0, store.ObjectQuery{Deleted: &yes})
	must(t, err)
	eqIDs(t, "ListObjects deleted", ids(dead), []int64{3})
	var paged []int64
	after := int64(0)
	for {
		page, err := s.ListObjects(ctx, 0, store.ObjectQuery{AfterID: after, Limit: 2})
		must(t, err)
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("page of %d > limit 2", len(page))
		}
		paged = append(paged, ids(page)...)
		after = page[len(page)-1].ID
	}
	eqIDs(t, "ListObjects paged", paged, []int64{1, 2, 3, 4, 5})
}
