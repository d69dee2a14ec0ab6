package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
)

// Cached remembers successful authentications for a short time, so that a
// client sending Basic credentials with every request pays for the
// deliberately slow password hash once per TTL, not per request. Entries
// are keyed by an HMAC of user and password under a per-process random key,
// so the cache never holds a password or a reusable hash of one. Failures
// are not cached.
type Cached struct {
	next Authenticator
	ttl  time.Duration
	now  func() time.Time
	key  []byte
	max  int

	mu      sync.Mutex
	entries map[[32]byte]cachedPrincipal
}

type cachedPrincipal struct {
	p       Principal
	expires time.Time
}

// NewCached wraps next with a cache of at most max entries living ttl.
func NewCached(next Authenticator, ttl time.Duration, maxEntries int) *Cached {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
	return &Cached{next: next, ttl: ttl, now: time.Now, key: key, max: maxEntries, entries: map[[32]byte]cachedPrincipal{}}
}

// Authenticate implements Authenticator.
func (c *Cached) Authenticate(ctx context.Context, user, password string) (Principal, error) {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(password))
	var k [32]byte
	copy(k[:], mac.Sum(nil))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.p, nil
	}
	p, err := c.next.Authenticate(ctx, user, password)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for k2, e2 := range c.entries { // drop expired entries, else everything
			if !now.Before(e2.expires) {
				delete(c.entries, k2)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[k] = cachedPrincipal{p: p, expires: now.Add(c.ttl)}
	return p, nil
}

// Flush forgets every cached authentication, so the next request of each
// caller is checked against the store again. Call it after users, passwords
// or permissions change.
func (c *Cached) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}
