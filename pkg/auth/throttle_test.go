package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// clock is an injectable clock the tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func retryAfter(t *testing.T, err error, want error) time.Duration {
	t.Helper()
	var re *RetryError
	if !errors.As(err, &re) || !errors.Is(err, want) {
		t.Fatalf("err = %v, want a *RetryError wrapping %v", err, want)
	}
	return re.After
}

func TestGuardLocksAUserAfterNFailuresEvenForTheRightPassword(t *testing.T) {
	inner := &counting{Authenticator: plainPassword{"admin", "right"}}
	clk := &clock{t: time.Unix(1000, 0)}
	g := NewGuarded(inner, GuardConfig{UserFailures: 3, AddrFailures: 100, Backoff: 10 * time.Second,
		MaxBackoff: time.Minute}, clk.now)
	ctx := WithClientAddr(context.Background(), "192.0.2.1")
	for i := range 3 {
		if _, err := g.Authenticate(ctx, "admin", "wrong"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("failure %d: err = %v", i+1, err)
		}
	}
	// The 4th attempt is refused without checking, even with the right password.
	checked := inner.calls
	if after := retryAfter(t, mustFail(g.Authenticate(ctx, "admin", "right")), ErrThrottled); after != 10*time.Second {
		t.Fatalf("Retry-After = %s, want the first window 10s", after)
	}
	if inner.calls != checked {
		t.Fatal("a locked user's password was checked")
	}
	// Another user from another address is unaffected.
	if _, err := g.Authenticate(WithClientAddr(context.Background(), "192.0.2.2"), "other", "x"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("other user: %v", err)
	}
	clk.add(9 * time.Second)
	if after := retryAfter(t, mustFail(g.Authenticate(ctx, "admin", "right")), ErrThrottled); after != time.Second {
		t.Fatalf("Retry-After = %s, want the rest of the window 1s", after)
	}
	// After the window, another wrong password locks for twice as long.
	clk.add(time.Second)
	if _, err := g.Authenticate(ctx, "admin", "wrong"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("after the window: %v", err)
	}
	if after := retryAfter(t, mustFail(g.Authenticate(ctx, "admin", "right")), ErrThrottled); after != 20*time.Second {
		t.Fatalf("Retry-After = %s, want the doubled window 20s", after)
	}
	// The window grows up to MaxBackoff.
	for range 5 {
		clk.add(time.Minute)
		_, _ = g.Authenticate(ctx, "admin", "wrong")
	}
	if after := retryAfter(t, mustFail(g.Authenticate(ctx, "admin", "right")), ErrThrottled); after != time.Minute {
		t.Fatalf("Retry-After = %s, want the cap 1m", after)
	}
	// The right password after the window succeeds and clears the count.
	clk.add(time.Minute)
	if _, err := g.Authenticate(ctx, "admin", "right"); err != nil {
		t.Fatalf("right password after the window: %v", err)
	}
	if _, err := g.Authenticate(ctx, "admin", "wrong"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("first failure after a success must be checked, got %v", err)
	}
}

func TestGuardLocksAnAddressAcrossUserNames(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	g := NewGuarded(plainPassword{"admin", "right"}, GuardConfig{UserFailures: 100, AddrFailures: 4,
		Backoff: time.Second}, clk.now)
	ctx := WithClientAddr(context.Background(), "198.51.100.7")
	for i := range 4 {
		_, _ = g.Authenticate(ctx, fmt.Sprintf("guess%d", i), "x")
	}
	retryAfter(t, mustFail(g.Authenticate(ctx, "admin", "right")), ErrThrottled)
	if _, err := g.Authenticate(WithClientAddr(context.Background(), "198.51.100.8"), "admin", "right"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	clk.add(time.Second)
	if _, err := g.Authenticate(ctx, "admin", "right"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestGuardTrackingIsBounded(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	g := NewGuarded(plainPassword{"admin", "right"}, GuardConfig{UserFailures: 2, MaxTracked: 100}, clk.now)
	for i := range 1000 {
		_, _ = g.Authenticate(context.Background(), fmt.Sprintf("made-up-%d", i), "x")
		if n := g.Tracked(); n > 100 {
			t.Fatalf("after %d names %d are tracked, want at most 100", i+1, n)
		}
	}
}

func TestGuardBoundsConcurrentChecks(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	inner := authFunc(func(context.Context, string, string) (Principal, error) {
		entered <- struct{}{}
		<-release
		return Principal{}, ErrBadCredentials
	})
	g := NewGuarded(inner, GuardConfig{Concurrency: 2, Wait: 20 * time.Millisecond, UserFailures: 100, AddrFailures: 100}, nil)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _, _ = g.Authenticate(context.Background(), fmt.Sprint("u", i), "x") })
	}
	<-entered
	<-entered
	// Both slots are taken: the third check waits Wait, then gives up.
	start := time.Now()
	retryAfter(t, mustFail(g.Authenticate(context.Background(), "u3", "x")), ErrBusy)
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("gave up after %s, want to wait 20ms first", waited)
	}
	close(release)
	wg.Wait()
}

// TestLoginFloodDoesNotSlowCachedCallers measures the latency of a caller
// whose credentials are cached while many goroutines send wrong passwords
// through the real bcrypt check. The guard runs at most Concurrency checks
// (half the CPUs), so the cached caller keeps a CPU. The same flood
// without the bound is measured for comparison (logged, not asserted).
func TestLoginFloodDoesNotSlowCachedCallers(t *testing.T) {
	b, err := NewBootstrap("admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	measure := func(concurrency int) (idle, flood time.Duration) {
		g := NewGuarded(b, GuardConfig{Concurrency: concurrency, Wait: 50 * time.Millisecond,
			UserFailures: 1 << 30, AddrFailures: 1 << 30}, nil)
		c := NewCached(g, time.Minute, 1<<20)
		if _, err := c.Authenticate(context.Background(), "admin", "s3cret"); err != nil {
			t.Fatal(err)
		}
		idle = p99(t, c)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					_, _ = c.Authenticate(ctx, "admin", fmt.Sprintf("wrong-%d-%d", i, n))
				}
			})
		}
		flood = p99(t, c)
		cancel()
		wg.Wait()
		return idle, flood
	}
	idle, guarded := measure(0)
	_, unbounded := measure(64)
	t.Logf("cached call p99: idle %s, wrong-password flood with the guard %s, without the bound %s",
		idle, guarded, unbounded)
	// Measured on 2 shared cores: idle 1-15ms, guarded 5-30ms, unbounded 75-105ms.
	if guarded > idle+50*time.Millisecond {
		t.Fatalf("cached call p99 under a login flood = %s, want under idle (%s) + 50ms", guarded, idle)
	}
}

// p99 paces 100 cached authentications on a 2ms ticker and returns the
// 99th percentile of the time from each tick to its answer, which includes
// waiting for a CPU.
func p99(t *testing.T, c *Cached) time.Duration {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	lat := make([]time.Duration, 0, 100)
	for range 100 {
		at := <-tick.C
		if _, err := c.Authenticate(context.Background(), "admin", "s3cret"); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(at))
	}
	slices.Sort(lat)
	return lat[98]
}

type plainPassword struct{ user, password string }

func (p plainPassword) Authenticate(_ context.Context, user, password string) (Principal, error) {
	if user != p.user || password != p.password {
		return Principal{}, ErrBadCredentials
	}
	return Principal{Name: user}, nil
}

type authFunc func(ctx context.Context, user, password string) (Principal, error)

func (f authFunc) Authenticate(ctx context.Context, u, p string) (Principal, error) {
	return f(ctx, u, p)
}

func mustFail(_ Principal, err error) error { return err }
