package storetest

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// testLastOutboxTransaction: the newest committed transaction per subject
// prefix survives publishing (acked outbox rows), ignores transactions
// without a matching event and rolled-back ones, and treats LIKE's
// wildcards in the prefix literally.
func testLastOutboxTransaction(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	last := func(prefix string) int64 {
		t.Helper()
		n, err := s.LastOutboxTransaction(ctx, prefix)
		must(t, err)
		return n
	}
	if n := last("cms.changes."); n != 0 {
		t.Fatalf("fresh store: %d, want 0", n)
	}
	a := write(t, s, func(tx store.Tx) {
		must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.4", MsgID: "a"},
			store.OutboxEvent{Subject: "cms.changes.4", MsgID: "a2"}))
	})
	b := write(t, s, func(tx store.Tx) {
		must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.9", MsgID: "b"}))
	})
	// Neither an event on another subject nor a transaction without events
	// moves it.
	other := write(t, s, func(tx store.Tx) {
		must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.jobs.queue", MsgID: "c"}))
	})
	write(t, s, func(tx store.Tx) { must(t, tx.PutObjects(ctx, obj(1, 0, 1, "g-los", ""))) })
	if n := last("cms.changes."); n != b || a >= b {
		t.Fatalf("after %d, %d: %d, want %d", a, b, n, b)
	}
	if n := last("cms.jobs."); n != other {
		t.Fatalf("jobs: %d, want %d", n, other)
	}
	if n := last(""); n != other {
		t.Fatalf("any subject: %d, want %d", n, other)
	}
	// Wildcards are literal: "cms_changes" matches nothing, "cms%" neither.
	if n := last("cms_changes."); n != 0 {
		t.Fatalf("prefix with _: %d, want 0", n)
	}
	if n := last("cms%"); n != 0 {
		t.Fatalf("prefix with %%: %d, want 0", n)
	}
	// A rolled-back transaction leaves nothing behind.
	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.4", MsgID: "rb"}))
	must(t, tx.Rollback())
	if n := last("cms.changes."); n != b {
		t.Fatalf("after rollback: %d, want %d", n, b)
	}
	// Publishing (claim and ack) does not forget it.
	evs, err := s.ClaimOutbox(ctx, 10)
	must(t, err)
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	must(t, s.AckOutbox(ctx, ids))
	if n := last("cms.changes."); n != b {
		t.Fatalf("after publishing: %d, want %d", n, b)
	}
}
