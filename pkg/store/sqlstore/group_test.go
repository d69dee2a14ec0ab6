package sqlstore

import (
	"context"
	"testing"
	"time"
)

// fakeTx records how a group's transaction ended.
type fakeTx struct {
	Querier
	committed, rolledBack bool
}

func (f *fakeTx) Commit(context.Context) error   { f.committed = true; return nil }
func (f *fakeTx) Rollback(context.Context) error { f.rolledBack = true; return nil }

// TestAbandonedHandOverEndsTheGroup: a Begin that is handed the writer
// just as its context ends passes it on like a member that wrote nothing.
// With no one else waiting the open group must commit for the members
// waiting on it, and the writer must be free again.
func TestAbandonedHandOverEndsTheGroup(t *testing.T) {
	tx := &fakeTx{}
	w := &writer{begin: func(context.Context) (TxConn, error) { return tx, nil }}
	ctx := context.Background()
	if err := w.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	g, first, err := w.join(ctx)
	if err != nil || !first {
		t.Fatalf("join = %v, %v", first, err)
	}
	// A member commits while another Begin waits: the group stays open
	// and the writer goes to the waiter.
	g.members++
	waiter := make(chan struct{})
	w.mu.Lock()
	w.waiters = append(w.waiters, waiter)
	w.mu.Unlock()
	w.handOver(g)
	<-waiter
	select {
	case <-g.done:
		t.Fatal("the group ended although a waiter took the writer")
	default:
	}
	// The waiter's context ended as it got the writer.
	w.abandon()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := g.wait(wctx); err != nil || !tx.committed {
		t.Fatalf("group outcome %v, committed %v: the waiting member was not committed", err, tx.committed)
	}
	if err := w.acquire(ctx); err != nil {
		t.Fatalf("the writer was not freed: %v", err)
	}
}
