package indexwriter_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
)

func TestRetryPolicy(t *testing.T) {
	p := indexwriter.RetryPolicy{RetryDelay: time.Second, MaxRetryDelay: 5 * time.Second}.WithDefaults()
	if p.MaxAttempts != indexwriter.DefaultMaxAttempts {
		t.Fatalf("MaxAttempts = %d", p.MaxAttempts)
	}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 50: 5 * time.Second} {
		if got := p.Backoff(attempt); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", attempt, got, want)
		}
	}
	hard := errors.New("bulk rejected")
	unavailable := fmt.Errorf("write: %w", search.ErrUnavailable)
	// What search.WithDeadline (and the store's wrapper) return for a
	// stopped Elasticsearch: connection refused, as component.ErrUnavailable.
	refused := fmt.Errorf("indexwriter: bulk: %w", &component.UnavailableError{Component: "search", Err: syscall.ECONNREFUSED})
	cases := []struct {
		failures int
		err      error
		want     bool
	}{
		{4, hard, false}, {5, hard, true}, {9, unavailable, false}, {9, context.DeadlineExceeded, false}, {9, refused, false},
	}
	for _, c := range cases {
		if got := p.ParkAfterFailure(c.failures, c.err); got != c.want {
			t.Errorf("ParkAfterFailure(%d, %v) = %v, want %v", c.failures, c.err, got, c.want)
		}
	}
	if p.ParkUnseen(5) || !p.ParkUnseen(6) {
		t.Error("ParkUnseen: an unseen delivery parks only beyond MaxAttempts")
	}
	never := indexwriter.RetryPolicy{MaxAttempts: -1}.WithDefaults()
	if never.ParkAfterFailure(100, hard) || never.ParkUnseen(100) {
		t.Error("MaxAttempts < 0 parks")
	}
}

// TestCrashProbe: a probe is open from StartCrashProbe to EndCrashProbe,
// per stream sequence, and a probe started again after it ended is open
// again (its writes are versioned past the tombstone).
func TestCrashProbe(t *testing.T) {
	ctx := context.Background()
	ix, _ := memIndexer(t, nil, 1)
	if err := ix.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	open := func(seq uint64) bool {
		t.Helper()
		o, err := ix.CrashProbe(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if open(7) {
		t.Fatal("a probe is open before any started")
	}
	for round := range 2 {
		if err := ix.StartCrashProbe(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if !open(7) || open(8) {
			t.Fatalf("round %d: the started probe of 7 is not open, or 8's is", round)
		}
		if err := ix.EndCrashProbe(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if open(7) {
			t.Fatalf("round %d: the probe is open after it ended", round)
		}
	}
}
