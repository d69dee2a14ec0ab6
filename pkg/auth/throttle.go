package auth

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Errors of the login guard. Both come wrapped in a *RetryError that says
// when to try again.
var (
	// ErrThrottled means too many wrong passwords for the user name or from
	// the client address: no password is checked until the window passes.
	ErrThrottled = errors.New("auth: too many failed logins")
	// ErrBusy means every password check slot stayed taken for the wait
	// allowed: the server is saturated with logins.
	ErrBusy = errors.New("auth: too many concurrent password checks")
)

// RetryError is ErrThrottled or ErrBusy with the time after which a retry
// can succeed (HTTP Retry-After).
type RetryError struct {
	Err   error
	After time.Duration
}

func (e *RetryError) Error() string { return fmt.Sprintf("%v; retry after %s", e.Err, e.After) }

// Unwrap returns ErrThrottled or ErrBusy.
func (e *RetryError) Unwrap() error { return e.Err }

// RetryAfterSeconds is After rounded up to whole seconds, at least 1, as
// HTTP's Retry-After wants it.
func (e *RetryError) RetryAfterSeconds() int {
	s := int((e.After + time.Second - 1) / time.Second)
	return max(s, 1)
}

// GuardConfig bounds password checking. Zero fields take the defaults of
// DefaultGuardConfig.
type GuardConfig struct {
	// UserFailures is how many wrong passwords in a row a user name may
	// see before it is locked for a backoff window (default 5).
	UserFailures int
	// AddrFailures is the same for a client address (default 20; one
	// address may carry several users behind a proxy or NAT).
	AddrFailures int
	// Backoff is the first lock window; each further failure after a
	// window doubles it (default 1s).
	Backoff time.Duration
	// MaxBackoff caps the window (default 5m). A key without failures for
	// twice this long is forgotten.
	MaxBackoff time.Duration
	// MaxTracked bounds the user names and addresses remembered (default
	// 10,000): memory stays bounded under a flood of made-up names.
	MaxTracked int
	// Concurrency bounds the password checks running at once (default
	// half the CPUs, at least 1), so a flood of logins cannot take the CPU
	// from callers whose credentials are cached.
	Concurrency int
	// Wait is how long a check waits for a slot before ErrBusy (default
	// 500ms).
	Wait time.Duration
}

// DefaultGuardConfig returns the defaults documented in the README.
func DefaultGuardConfig() GuardConfig {
	return GuardConfig{
		UserFailures: 5, AddrFailures: 20, Backoff: time.Second, MaxBackoff: 5 * time.Minute,
		MaxTracked: 10000, Concurrency: max(1, runtime.NumCPU()/2), Wait: 500 * time.Millisecond,
	}
}

func (c GuardConfig) withDefaults() GuardConfig {
	d := DefaultGuardConfig()
	if c.UserFailures <= 0 {
		c.UserFailures = d.UserFailures
	}
	if c.AddrFailures <= 0 {
		c.AddrFailures = d.AddrFailures
	}
	if c.Backoff <= 0 {
		c.Backoff = d.Backoff
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = max(d.MaxBackoff, c.Backoff)
	}
	if c.MaxTracked <= 0 {
		c.MaxTracked = d.MaxTracked
	}
	if c.Concurrency <= 0 {
		c.Concurrency = d.Concurrency
	}
	if c.Wait <= 0 {
		c.Wait = d.Wait
	}
	return c
}

// Guarded wraps the authenticator that checks passwords (the slow one,
// under Cached) with login throttling and a bound on concurrent checks:
//
//   - after UserFailures wrong passwords for a user name, or AddrFailures
//     from a client address (WithClientAddr), no password is checked for
//     that name or address until a backoff window passes: Authenticate
//     returns a *RetryError wrapping ErrThrottled, even for the right
//     password. Each failure after a window doubles it up to MaxBackoff; a
//     success clears the user name's count (not the address's).
//   - at most Concurrency checks run at once; a check that finds no slot
//     within Wait returns a *RetryError wrapping ErrBusy.
//
// Put it under Cached: credentials cached by an earlier success are
// answered by the cache and never wait for or count against the guard, so
// a flood of wrong passwords neither locks out nor slows down callers who
// are already logged in.
type Guarded struct {
	next Authenticator
	cfg  GuardConfig
	now  func() time.Time
	sem  chan struct{}

	mu      sync.Mutex
	tracked map[string]*failures
}

type failures struct {
	count  int       // wrong passwords in a row
	until  time.Time // locked until
	last   time.Time // last failure
	window time.Duration
}

// NewGuarded wraps next. now is the clock (time.Now when nil).
func NewGuarded(next Authenticator, cfg GuardConfig, now func() time.Time) *Guarded {
	if now == nil {
		now = time.Now
	}
	cfg = cfg.withDefaults()
	return &Guarded{next: next, cfg: cfg, now: now, sem: make(chan struct{}, cfg.Concurrency),
		tracked: map[string]*failures{}}
}

// Authenticate implements Authenticator.
func (g *Guarded) Authenticate(ctx context.Context, user, password string) (Principal, error) {
	keys := g.keys(ctx, user)
	if err := g.locked(keys); err != nil {
		return Principal{}, err
	}
	if err := g.acquire(ctx); err != nil {
		return Principal{}, err
	}
	p, err := g.next.Authenticate(ctx, user, password)
	<-g.sem
	switch {
	case errors.Is(err, ErrBadCredentials):
		g.fail(keys)
	case err == nil:
		g.mu.Lock()
		delete(g.tracked, keys[0].key)
		g.mu.Unlock()
	}
	return p, err
}

type guardKey struct {
	key       string
	threshold int
}

// keys are the user name's key first, then the client address's if known.
func (g *Guarded) keys(ctx context.Context, user string) []guardKey {
	keys := []guardKey{{"user\x00" + user, g.cfg.UserFailures}}
	if addr := ClientAddr(ctx); addr != "" {
		keys = append(keys, guardKey{"addr\x00" + addr, g.cfg.AddrFailures})
	}
	return keys
}

func (g *Guarded) locked(keys []guardKey) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		if f := g.tracked[k.key]; f != nil && now.Before(f.until) {
			wait = max(wait, f.until.Sub(now))
		}
	}
	if wait > 0 {
		return &RetryError{Err: ErrThrottled, After: wait}
	}
	return nil
}

func (g *Guarded) acquire(ctx context.Context) error {
	select {
	case g.sem <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(g.cfg.Wait)
	defer t.Stop()
	select {
	case g.sem <- struct{}{}:
		return nil
	case <-t.C:
		return &RetryError{Err: ErrBusy, After: time.Second}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fail counts a wrong password against every key and locks those at their
// threshold: the first lock lasts Backoff, each later one twice the last.
func (g *Guarded) fail(keys []guardKey) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		f := g.tracked[k.key]
		if f != nil && now.Sub(f.last) >= 2*g.cfg.MaxBackoff && !now.Before(f.until) {
			f = nil // quiet for long enough: start afresh
		}
		if f == nil {
			g.makeRoom(now)
			f = &failures{}
			g.tracked[k.key] = f
		}
		f.count++
		f.last = now
		if f.count >= k.threshold {
			if f.window == 0 {
				f.window = g.cfg.Backoff
			} else {
				f.window = min(2*f.window, g.cfg.MaxBackoff)
			}
			f.until = now.Add(f.window)
		}
	}
}

// makeRoom keeps the tracking map under MaxTracked: it forgets keys that
// are not locked, and if every key is locked, arbitrary ones.
func (g *Guarded) makeRoom(now time.Time) {
	if len(g.tracked) < g.cfg.MaxTracked {
		return
	}
	for k, f := range g.tracked {
		if !now.Before(f.until) {
			delete(g.tracked, k)
		}
	}
	for k := range g.tracked {
		if len(g.tracked) < g.cfg.MaxTracked*9/10 {
			break
		}
		delete(g.tracked, k)
	}
}

// Tracked is the number of user names and addresses remembered.
func (g *Guarded) Tracked() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.tracked)
}

type clientAddrKey struct{}

// WithClientAddr returns ctx carrying the caller's network address (an IP,
// without port), which Guarded throttles by.
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// ClientAddr returns the address set by WithClientAddr, or "".
func ClientAddr(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}
