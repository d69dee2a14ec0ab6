package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/store/storetest"
)

func open(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

// TestReopen checks that data and counters survive closing the file and that
// opening an already migrated file is fine.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cms.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx, store.TxMeta{User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tx.NewObjectIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.PutObjects(ctx, store.Object{ID: ids[0], TypeID: 1, GUID: "g"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustErr := func(err error) {
		if err == nil {
			t.Fatal("operation on a closed store succeeded")
		}
	}
	_, err = s.Begin(ctx, store.TxMeta{})
	mustErr(err)

	s2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if last, err := s2.LastTransactionID(ctx); err != nil || last != tx.ID() {
		t.Fatalf("LastTransactionID after reopen = %d, %v; want %d", last, err, tx.ID())
	}
	tx2, err := s2.Begin(ctx, store.TxMeta{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	next, err := tx2.NewObjectIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tx2.ID() <= tx.ID() || next[0] <= ids[0] {
		t.Fatalf("after reopen: tx %d (was %d), object id %d (was %d)", tx2.ID(), tx.ID(), next[0], ids[0])
	}
}

// BenchmarkWriteTx: one transaction with 10 objects x 5 values (see storetest).
func BenchmarkWriteTx(b *testing.B) {
	storetest.BenchmarkWriteTx(b, open(b))
}

// TestReopenReleasesOutboxLeases: a process killed between claiming outbox
// events and acking them leaves them leased in the file. The next process
// must claim them at once and before anything newer: waiting for the lease
// (30s) would publish later transactions first, out of commit order.
func TestReopenReleasesOutboxLeases(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cms.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendEvent := func(s *sqlite.Store, msgID string) {
		t.Helper()
		tx, err := s.Begin(ctx, store.TxMeta{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.objects.1", MsgID: msgID}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent(s, "m1")
	appendEvent(s, "m2")
	if ev, err := s.ClaimOutbox(ctx, 10); err != nil || len(ev) != 2 {
		t.Fatalf("claim = %+v, %v", ev, err)
	}
	// The relay dies here: no ack. (Closing instead of killing leaves the
	// file as a kill does: the lease is committed.)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	appendEvent(s, "m3")
	ev, err := s.ClaimOutbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ev {
		got = append(got, e.MsgID)
	}
	if fmt.Sprint(got) != "[m1 m2 m3]" {
		t.Fatalf("claim after reopen = %v, want [m1 m2 m3] (the dead relay's events first)", got)
	}
}
