package component_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
)

var errNotFound = errors.New("not found")

func TestClassify(t *testing.T) {
	g := component.Guard{Name: "search", Unavailable: func(err error) bool { return errors.Is(err, errBusy) }}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errNotFound, false},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("es: %w", errBusy), true},
	} {
		got := g.Classify(context.Background(), c.err)
		if errors.Is(got, component.ErrUnavailable) != c.want {
			t.Errorf("Classify(%v) = %v, unavailable want %v", c.err, got, c.want)
		}
		if c.err != nil && !errors.Is(got, c.err) {
			t.Errorf("Classify(%v) lost the cause: %v", c.err, got)
		}
	}
	// The caller's own cancellation is not the component's fault.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Classify(ctx, context.Canceled); errors.Is(err, component.ErrUnavailable) {
		t.Errorf("canceled caller classified as unavailable: %v", err)
	}
}

var errBusy = errors.New("busy")

// TestDoDeadline: a call that ignores nothing but its context ends at the
// guard's deadline as unavailable; a shorter caller deadline wins and
// stays the caller's.
func TestDoDeadline(t *testing.T) {
	g := component.Guard{Name: "cache", Timeout: 50 * time.Millisecond}
	block := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	start := time.Now()
	err := g.Do(context.Background(), block)
	if !errors.Is(err, component.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("Do = %v after %v", err, time.Since(start))
	}
	var ue *component.UnavailableError
	if !errors.As(err, &ue) || ue.Component != "cache" {
		t.Fatalf("error does not name the component: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := g.Do(ctx, block); errors.Is(err, component.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller deadline: %v", err)
	}
}

// TestBudget: the calls within one Budget share its deadline (they take
// none of their own: the context they get ends when the budget's does),
// and the call the budget ends is unavailable, like one past its own
// deadline; a caller's sooner deadline is kept and stays the caller's,
// and another component's guard does not take the budget as its own.
func TestBudget(t *testing.T) {
	g := component.Guard{Name: "search", Timeout: 80 * time.Millisecond}
	ctx, cancel := g.Budget(context.Background())
	defer cancel()
	budget, _ := ctx.Deadline()
	var seen []time.Time
	record := func(ctx context.Context) error { d, _ := ctx.Deadline(); seen = append(seen, d); return nil }
	for range 3 {
		if err := g.Do(ctx, record); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range seen {
		if !d.Equal(budget) {
			t.Errorf("call %d had the deadline %v, the budget's is %v", i, d, budget)
		}
	}
	block := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	start := time.Now()
	err := g.Do(ctx, block)
	if !errors.Is(err, component.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("the call the budget ended: %v after %v", err, time.Since(start))
	}
	if err := (component.Guard{Name: "cache", Timeout: time.Minute}).Classify(ctx, context.DeadlineExceeded); errors.Is(err, component.ErrUnavailable) {
		t.Errorf("another component's guard took the search budget as its own: %v", err)
	}

	// A caller's sooner deadline: no budget of its own, and its end is
	// the caller's.
	caller, cancelCaller := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancelCaller()
	bctx, cancelB := g.Budget(caller)
	defer cancelB()
	if d1, _ := bctx.Deadline(); func() bool { d0, _ := caller.Deadline(); return !d1.Equal(d0) }() {
		t.Errorf("the budget replaced a sooner caller deadline")
	}
	if err := g.Do(bctx, block); errors.Is(err, component.ErrUnavailable) {
		t.Errorf("the caller's own deadline was classified as unavailable: %v", err)
	}
	// No timeout: no budget.
	if c, cancel := (component.Guard{Name: "search"}).Budget(context.Background()); c != context.Background() {
		t.Error("a guard without a timeout derived a context")
	} else {
		cancel()
	}
}
