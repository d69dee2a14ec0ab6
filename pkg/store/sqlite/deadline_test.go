package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/storetest"
)

// TestConformanceWithDeadline: the deadline wrapper keeps every contract
// of the suite (transactions outlive the per-call deadlines).
func TestConformanceWithDeadline(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return store.WithDeadline(open(t), component.Guard{Name: "store", Timeout: 15 * time.Second})
	})
}

// TestBeginDeadline: a Begin that waits for the write lock longer than the
// deadline fails as unavailable at the deadline; the transaction it gets
// later is rolled back, so the lock is free again afterwards.
func TestBeginDeadline(t *testing.T) {
	ctx := context.Background()
	const timeout = 200 * time.Millisecond
	s := store.WithDeadline(open(t), component.Guard{Name: "store", Timeout: timeout})
	holder, err := s.Begin(ctx, store.TxMeta{User: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Begin(ctx, store.TxMeta{User: "waiter"})
	took := time.Since(start)
	if !errors.Is(err, component.ErrUnavailable) {
		t.Fatalf("Begin while locked = %v, want component.ErrUnavailable", err)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Fatalf("Begin gave up after %v, want about %v", took, timeout)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The abandoned Begin gets the lock now and must give it back.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tx, err := s.Begin(ctx, store.TxMeta{User: "after"})
		if err == nil {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("write lock not released by the abandoned Begin: %v", err)
		}
	}
}
