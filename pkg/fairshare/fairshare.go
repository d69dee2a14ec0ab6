// Package fairshare shares a fixed number of slots (renders running,
// thumbnail decodes, live subscriptions) between callers so that no one
// caller can take them all:
//
//   - Total bounds the slots in use at once, whoever holds them;
//   - PerUser bounds the slots one caller other than an administrator
//     holds: beyond it Acquire fails with a *LimitError of kind
//     errkind.TooMany (429 + Retry-After, naming the cap);
//     administrators are trusted and bounded by Total only (a site's
//     backend often reads as one administrative user);
//   - AdminReserve slots of Total are taken by administrators only, so
//     other users together hold at most Total−AdminReserve and an
//     administrator still finds a slot while they saturate theirs; when
//     the shared slots are full Acquire fails with ErrBusy (503 +
//     Retry-After: the process is busy, not the caller greedy).
//
// The caller is the authenticated principal of the context (pkg/auth,
// CallerFrom): its user name and whether it is an administrator; calls
// without one share the anonymous caller "".
package fairshare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/errkind"
)

// Limits configure a Limiter.
type Limits struct {
	// Total is how many slots exist (at least 1).
	Total int
	// PerUser is how many slots one caller holds at once; 0 or more than
	// Total is Total.
	PerUser int
	// AdminReserve is how many of Total only administrators take; it is
	// clamped to Total−1 so other users keep at least one.
	AdminReserve int
	// Wait is how long Acquire waits for a slot before it fails (0: it
	// fails at once).
	Wait time.Duration
	// RetryAfter is the Retry-After of a refusal (default 1 s).
	RetryAfter time.Duration
	// Cap names the per-user cap's setting in refusals (e.g.
	// "renderSlotsPerUser"), so a client and an operator know which
	// limit it met.
	Cap string
}

// ReserveOr is the admin reserve a setting asks for: 0 (unset) is def, a
// negative value none. The one rule of every limiter's adminReserve
// setting (New clamps it to Total−1).
func ReserveOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// ErrBusy means every slot other users may take is in use (503).
var ErrBusy = errors.New("fairshare: every slot is in use")

// LimitError is a caller holding as many slots (or uploads, bytes…) as
// its cap allows. It is of kind errkind.TooMany (429).
type LimitError struct {
	// Cap is the setting that bounds it, e.g. "renderSlotsPerUser".
	Cap string
	// Limit is the cap's value.
	Limit int64
	// What is counted, e.g. "renders running".
	What string
	// After is when a retry may succeed.
	After time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("too many %s for this user: at most %d (%s); retry later", e.What, e.Limit, e.Cap)
}

// Is makes errors.Is(err, errkind.TooMany) true.
func (e *LimitError) Is(target error) bool { return target == errkind.TooMany }

// RetryAfter is the client's wait before a retry.
func (e *LimitError) RetryAfter() time.Duration { return e.After }

// LimitName is the setting of the cap met.
func (e *LimitError) LimitName() string { return e.Cap }

// Caller is who takes a slot.
type Caller struct {
	// ID is the user name ("" for anonymous callers).
	ID    string
	Admin bool
}

// CallerFrom is the caller of ctx: the authenticated principal's user
// name and admin flag (pkg/auth), or the anonymous caller.
func CallerFrom(ctx context.Context) Caller {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return Caller{}
	}
	return Caller{ID: p.Name, Admin: p.Admin}
}

// Limiter hands out slots.
type Limiter struct {
	l      Limits
	what   string
	mu     sync.Mutex
	inUse  int
	shared int // slots held by non-administrators
	users  map[string]int
	freed  chan struct{} // closed (and replaced) when a slot is released
}

// New returns a limiter counting what (e.g. "renders running", used in
// messages).
func New(what string, l Limits) *Limiter {
	l.Total = max(l.Total, 1)
	if l.PerUser <= 0 || l.PerUser > l.Total {
		l.PerUser = l.Total
	}
	l.AdminReserve = min(max(l.AdminReserve, 0), l.Total-1)
	if l.RetryAfter <= 0 {
		l.RetryAfter = time.Second
	}
	return &Limiter{l: l, what: what, users: map[string]int{}, freed: make(chan struct{})}
}

// Limits are the limiter's limits after clamping.
func (f *Limiter) Limits() Limits { return f.l }

// InUse is how many slots are held now.
func (f *Limiter) InUse() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inUse
}

// Held is how many slots c holds now.
func (f *Limiter) Held(c Caller) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.users[c.ID]
}

// Acquire takes a slot for c, waiting up to Limits.Wait (and while ctx
// lasts) for one: ErrBusy when all Total slots are in use, else a
// *LimitError when c (no administrator) holds PerUser slots, ErrBusy when the shared slots
// are in use and c is no administrator; ctx's error when it ends first.
// The release function returns the slot; calling it more than once is
// harmless.
func (f *Limiter) Acquire(ctx context.Context, c Caller) (release func(), err error) {
	var timeout <-chan time.Time
	if f.l.Wait > 0 {
		t := time.NewTimer(f.l.Wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		f.mu.Lock()
		err := f.refusal(c)
		if err == nil {
			f.take(c)
			f.mu.Unlock()
			return f.releaser(c), nil
		}
		freed := f.freed
		f.mu.Unlock()
		if timeout == nil {
			return nil, err
		}
		select {
		case <-freed:
		case <-timeout:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refusal is why c gets no slot now (nil: it gets one); f.mu is held.
func (f *Limiter) refusal(c Caller) error {
	switch {
	case f.inUse >= f.l.Total:
		return fmt.Errorf("%w: %d %s", ErrBusy, f.inUse, f.what)
	case !c.Admin && f.users[c.ID] >= f.l.PerUser:
		return &LimitError{Cap: f.l.Cap, Limit: int64(f.l.PerUser), What: f.what, After: f.l.RetryAfter}
	case !c.Admin && f.shared >= f.l.Total-f.l.AdminReserve:
		return fmt.Errorf("%w: %d %s", ErrBusy, f.inUse, f.what)
	}
	return nil
}

func (f *Limiter) take(c Caller) {
	f.inUse++
	f.users[c.ID]++
	if !c.Admin {
		f.shared++
	}
}

func (f *Limiter) releaser(c Caller) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.inUse--
			if f.users[c.ID]--; f.users[c.ID] <= 0 {
				delete(f.users, c.ID)
			}
			if !c.Admin {
				f.shared--
			}
			close(f.freed)
			f.freed = make(chan struct{})
		})
	}
}
