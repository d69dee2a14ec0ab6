package storetest

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// testJobs checks the job rows: allocation, round trip, update, the
// listing's filters and keyset paging, and rollback.
func testJobs(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var a, b, c store.Job
	write(t, s, func(tx store.Tx) {
		var err error
		a, err = tx.InsertJob(ctx, store.Job{Branch: 4, Definition: 900, User: "Ann", Doc: []byte(`{"x":1}`)})
		must(t, err)
		b, err = tx.InsertJob(ctx, store.Job{Branch: 5, Definition: 901, Trigger: 7, User: "bob", State: 1, Doc: []byte(`{}`)})
		must(t, err)
		got, err := tx.GetJob(ctx, a.ID)
		must(t, err)
		if string(got.Doc) != `{"x":1}` || got.User != "Ann" || got.Branch != 4 {
			t.Fatalf("GetJob in tx = %+v", got)
		}
	})
	if a.ID <= 0 || b.ID <= a.ID || a.Created.IsZero() {
		t.Fatalf("ids %d, %d; created %v", a.ID, b.ID, a.Created)
	}
	_, err := s.GetJob(ctx, b.ID+100)
	mustBe(t, err, store.ErrNotFound, "unknown job")
	write(t, s, func(tx store.Tx) {
		_, err := tx.InsertJob(ctx, store.Job{Branch: 4})
		mustBe(t, err, store.ErrInvalidArgument, "no definition")
		a.State, a.Deleted, a.Doc = 2, true, []byte(`{"x":2}`)
		must(t, tx.UpdateJob(ctx, a))
		mustBe(t, tx.UpdateJob(ctx, store.Job{ID: b.ID + 100, Definition: 1}), store.ErrNotFound, "update unknown job")
		c, err = tx.InsertJob(ctx, store.Job{Branch: 4, Definition: 900, User: "ann", Doc: []byte(`{}`)})
		must(t, err)
	})
	got, err := s.GetJob(ctx, a.ID)
	must(t, err)
	if got.State != 2 || !got.Deleted || string(got.Doc) != `{"x":2}` || got.Modified.Before(got.Created) {
		t.Fatalf("updated job = %+v", got)
	}
	list := func(q store.JobQuery) []int64 {
		t.Helper()
		js, err := s.ListJobs(ctx, q)
		must(t, err)
		out := make([]int64, len(js))
		for i, j := range js {
			out[i] = j.ID
		}
		return out
	}
	four, def, trig, running, no := int64(4), int64(900), int64(7), 1, false
	eqIDs(t, "all", list(store.JobQuery{}), []int64{c.ID, b.ID, a.ID})
	eqIDs(t, "branch", list(store.JobQuery{Branch: &four}), []int64{c.ID, a.ID})
	eqIDs(t, "definition", list(store.JobQuery{Definition: &def}), []int64{c.ID, a.ID})
	eqIDs(t, "trigger", list(store.JobQuery{Trigger: &trig}), []int64{b.ID})
	eqIDs(t, "state", list(store.JobQuery{State: &running}), []int64{b.ID})
	eqIDs(t, "user without case", list(store.JobQuery{User: "ANN"}), []int64{c.ID, a.ID})
	eqIDs(t, "not deleted", list(store.JobQuery{Deleted: &no}), []int64{c.ID, b.ID})
	eqIDs(t, "page", list(store.JobQuery{BeforeID: c.ID, Limit: 1}), []int64{b.ID})

	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	rolled, err := tx.InsertJob(ctx, store.Job{Branch: 4, Definition: 900, Doc: []byte(`{}`)})
	must(t, err)
	must(t, tx.Rollback())
	_, err = s.GetJob(ctx, rolled.ID)
	mustBe(t, err, store.ErrNotFound, "rolled-back job")
}
