package app

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestJobWritesWakeTheRelay: the jobs target's writes (a release's
// promote) wake the outbox relay of the process when Management runs in
// it, so a release is published at once rather than at the relay's next
// poll (up to a second away); without a relay they commit as before.
func TestJobWritesWakeTheRelay(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	w := &jobsWiring{comps: &Components{Store: st}}
	write := func() {
		t.Helper()
		tx, err := w.store().Begin(ctx, store.TxMeta{User: "job", Comment: "release"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write() // no relay in the process: nothing to wake, no panic
	woken := 0
	w.relayNotify = func() { woken++ }
	write()
	if woken != 1 {
		t.Fatalf("a committed job write woke the relay %d times, want 1", woken)
	}
	tx, err := w.store().Begin(ctx, store.TxMeta{User: "job"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if woken != 1 {
		t.Fatalf("a rolled back job write woke the relay (%d times)", woken)
	}
}
