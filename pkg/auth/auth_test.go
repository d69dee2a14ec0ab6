package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func basic(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }

func TestAuthorize(t *testing.T) {
	b, err := NewBootstrap("admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name, header, actAs string
		wantErr             error
		wantUser            string
	}{
		{"no header", "", "", ErrNoCredentials, ""},
		{"bearer without a token verifier", "Bearer abc", "", ErrBadToken, ""},
		{"bad base64", "Basic !!!", "", ErrBadCredentials, ""},
		{"no colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin")), "", ErrBadCredentials, ""},
		{"wrong password", basic("admin", "nope"), "", ErrBadCredentials, ""},
		{"unknown user", basic("eve", "s3cret"), "", ErrBadCredentials, ""},
		{"ok", basic("admin", "s3cret"), "", nil, "admin"},
		{"lower-case scheme", "basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret")), "", nil, "admin"},
		{"internal caller acts as editor", basic("admin", "s3cret"), "editor", nil, "editor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Authorize(ctx, b, c.header, c.actAs)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err == nil && p.User() != c.wantUser {
				t.Fatalf("user = %q, want %q", p.User(), c.wantUser)
			}
		})
	}
}

type plainUser struct{}

func (plainUser) Authenticate(context.Context, string, string) (Principal, error) {
	return Principal{Name: "editor"}, nil
}

func TestActAsRefusedForNonInternalCallers(t *testing.T) {
	_, err := Authorize(context.Background(), plainUser{}, basic("editor", "x"), "admin")
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	p, err := Authorize(context.Background(), plainUser{}, basic("editor", "x"), "editor")
	if err != nil || p.User() != "editor" {
		t.Fatalf("acting as oneself: %v %v", p, err)
	}
}

func FuzzParseBasic(f *testing.F) {
	f.Add("Basic YWRtaW46YWRtaW4=")
	f.Add("basic Og==")
	f.Add("Basic")
	f.Fuzz(func(t *testing.T, h string) {
		u, _, err := ParseBasic(h)
		if err == nil && u == "" {
			t.Fatalf("accepted an empty user name from %q", h)
		}
	})
}

type counting struct {
	Authenticator
	calls int
}

func (c *counting) Authenticate(ctx context.Context, u, p string) (Principal, error) {
	c.calls++
	return c.Authenticator.Authenticate(ctx, u, p)
}

func TestCachedAvoidsRehashingButNeverCachesFailures(t *testing.T) {
	b, _ := NewBootstrap("admin", "pw")
	inner := &counting{Authenticator: b}
	c := NewCached(inner, time.Minute, 1<<20)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	for range 3 {
		if _, err := c.Authenticate(ctx, "admin", "pw"); err != nil {
			t.Fatal(err)
		}
	}
	if inner.calls != 1 {
		t.Fatalf("inner called %d times for one credential, want 1", inner.calls)
	}
	for range 2 {
		if _, err := c.Authenticate(ctx, "admin", "wrong"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password: %v", err)
		}
	}
	if inner.calls != 3 {
		t.Fatalf("failures must not be cached: %d calls", inner.calls)
	}
	now = now.Add(2 * time.Minute)
	_, _ = c.Authenticate(ctx, "admin", "pw")
	if inner.calls != 4 {
		t.Fatalf("expired entry was used: %d calls", inner.calls)
	}
}

func TestAllowed(t *testing.T) {
	// Tree: 4 → 10 → 11; 4 → 20.
	chain11, chain20, chain4 := []int64{11, 10, 4}, []int64{20, 4}, []int64{4}
	editor := Principal{Name: "editor", Read: []int64{10}, Write: []int64{11}}
	cases := []struct {
		name  string
		p     Principal
		a     Access
		chain []int64
		want  bool
	}{
		{"read grant covers the branch", editor, AccessRead, []int64{10, 4}, true},
		{"read grant covers descendants", editor, AccessRead, chain11, true},
		{"read grant does not allow writing", editor, AccessWrite, []int64{10, 4}, false},
		{"write grant allows writing", editor, AccessWrite, chain11, true},
		{"write implies read", Principal{Write: []int64{20}}, AccessRead, chain20, true},
		{"no grant on a sibling", editor, AccessRead, chain20, false},
		{"no grant on an ancestor", editor, AccessRead, chain4, false},
		{"no rights at all", Principal{Name: "nobody"}, AccessRead, chain4, false},
		{"empty chain", editor, AccessRead, nil, false},
		{"admin may do everything", Principal{Admin: true}, AccessWrite, nil, true},
		{"internal is not admin", Principal{Internal: true}, AccessRead, chain4, false},
	}
	for _, c := range cases {
		if got := c.p.Allowed(c.a, c.chain); got != c.want {
			t.Errorf("%s: Allowed(%v, %v) = %v, want %v", c.name, c.a, c.chain, got, c.want)
		}
	}
}

func TestCachedFlush(t *testing.T) {
	b, _ := NewBootstrap("admin", "pw")
	inner := &counting{Authenticator: b}
	c := NewCached(inner, time.Minute, 1<<20)
	ctx := context.Background()
	_, _ = c.Authenticate(ctx, "admin", "pw")
	_, _ = c.Authenticate(ctx, "admin", "pw")
	c.Flush()
	_, _ = c.Authenticate(ctx, "admin", "pw")
	if inner.calls != 2 {
		t.Fatalf("inner called %d times, want 2 (once before and once after Flush)", inner.calls)
	}
}

// gated is an authenticator whose checks block until open is closed.
type gated struct {
	open  chan struct{}
	calls atomic.Int32
}

func (g *gated) Authenticate(context.Context, string, string) (Principal, error) {
	g.calls.Add(1)
	<-g.open
	return Principal{Name: "editor"}, nil
}

// TestCachedCoalescesConcurrentChecks: many requests with the same
// credentials miss the cache together (first request, expiry, Flush). They
// must share one password check instead of queueing behind the guard's
// concurrency bound, where all but the first would be refused as busy.
func TestCachedCoalescesConcurrentChecks(t *testing.T) {
	inner := &gated{open: make(chan struct{})}
	c := NewCached(NewGuarded(inner, GuardConfig{Concurrency: 1, Wait: 10 * time.Millisecond}, nil), time.Minute, 10)
	const callers = 32
	var arrived atomic.Int32
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arrived.Add(1)
			p, err := c.Authenticate(context.Background(), "editor", "pw")
			if err == nil && p.Name != "editor" {
				err = errors.New("wrong principal " + p.Name)
			}
			errs <- err
		}()
	}
	for arrived.Load() < callers || inner.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // past the guard's wait: uncoalesced callers would be refused by now
	close(inner.open)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a caller with the same valid credentials failed: %v", err)
		}
	}
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d password checks for one credential, want 1", n)
	}
	// A Flush makes the next callers check again (once), not reuse the
	// entry or a flight from before it.
	c.Flush()
	if _, err := c.Authenticate(context.Background(), "editor", "pw"); err != nil {
		t.Fatal(err)
	}
	if n := inner.calls.Load(); n != 2 {
		t.Fatalf("%d password checks after Flush, want 2", n)
	}
}

// TestCachedWaiterHonoursItsContext: a caller waiting for another's check
// stops when its own context ends.
func TestCachedWaiterHonoursItsContext(t *testing.T) {
	inner := &gated{open: make(chan struct{})}
	defer close(inner.open)
	c := NewCached(inner, time.Minute, 1<<20)
	go func() { _, _ = c.Authenticate(context.Background(), "editor", "pw") }()
	for inner.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Authenticate(ctx, "editor", "pw"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// grantsOf authenticates every user with 100 read grants.
type grantsOf struct{}

func (grantsOf) Authenticate(_ context.Context, u, _ string) (Principal, error) {
	return Principal{Name: u, Read: make([]int64, 100)}, nil
}

// TestCachedBoundsBytes: the credentials cache holds at most its bytes
// (principalCost each, grants included), however many users log in.
func TestCachedBoundsBytes(t *testing.T) {
	const maxBytes = 8 << 10
	c := NewCached(grantsOf{}, time.Minute, maxBytes)
	for i := range 50 {
		if _, err := c.Authenticate(context.Background(), fmt.Sprintf("user%d", i), "pw"); err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, e := range c.entries {
			sum += principalCost(e.p)
		}
		if sum > maxBytes || sum != c.bytes {
			t.Fatalf("after %d users: entries cost %d bytes (counted %d), the bound is %d", i+1, sum, c.bytes, maxBytes)
		}
	}
	if n := len(c.entries); n == 0 || int64(n)*principalCost(Principal{Name: "user10", Read: make([]int64, 100)}) > maxBytes {
		t.Errorf("%d entries cached", n)
	}
}
