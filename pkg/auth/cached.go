package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cached remembers successful authentications for a short time, so that a
// client sending Basic credentials with every request pays for the
// deliberately slow password hash once per TTL, not per request. Entries
// are keyed by an HMAC of user and password under a per-process random key,
// so the cache never holds a password or a reusable hash of one. Failures
// are not cached.
//
// Concurrent misses for the same credentials are coalesced: one password
// check runs and every caller waiting for it gets its answer. Without that,
// N workers sharing one login would all miss together when the entry
// expires (or after Flush) and queue N checks behind the guard's small
// concurrency bound, and the last ones would be refused as busy.
type Cached struct {
	next Authenticator
	ttl  time.Duration
	now  func() time.Time
	key  []byte
	max  int64 // bytes (cost)

	flights singleflight.Group

	mu      sync.Mutex
	entries map[[32]byte]cachedPrincipal
	bytes   int64 // the entries' cost
	// gen counts Flush calls: a check that started before a Flush neither
	// fills the cache nor answers callers that arrived after it.
	gen uint64
}

type cachedPrincipal struct {
	p       Principal
	expires time.Time
	cost    int64
}

// principalOverhead is what a cached principal costs beyond its names and
// grants: the map slot holding key, record and expiry, and the slices'
// headers.
const principalOverhead = 192

// principalCost is the memory one cached principal holds.
func principalCost(p Principal) int64 {
	return principalOverhead + int64(len(p.Name)+len(p.ActingAs)) + 8*int64(cap(p.Read)+cap(p.Write))
}

// NewCached wraps next with a cache of at most maxBytes of entries
// (principalCost each) living ttl.
func NewCached(next Authenticator, ttl time.Duration, maxBytes int64) *Cached {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
	return &Cached{next: next, ttl: ttl, now: time.Now, key: key, max: maxBytes, entries: map[[32]byte]cachedPrincipal{}}
}

// Authenticate implements Authenticator.
func (c *Cached) Authenticate(ctx context.Context, user, password string) (Principal, error) {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(password))
	var k [32]byte
	copy(k[:], mac.Sum(nil))
	if p, ok := c.lookup(k); ok {
		return p, nil
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	// The check runs detached from this caller's cancellation (others may
	// be waiting for it; the authenticator bounds its own calls), and each
	// caller stops waiting when its own context ends.
	ch := c.flights.DoChan(string(k[:])+strconv.FormatUint(gen, 10), func() (any, error) {
		if p, ok := c.lookup(k); ok { // a flight that just ended filled it
			return p, nil
		}
		p, err := c.next.Authenticate(context.WithoutCancel(ctx), user, password)
		if err == nil {
			c.store(k, gen, p)
		}
		return p, err
	})
	select {
	case r := <-ch:
		p, _ := r.Val.(Principal)
		return p, r.Err
	case <-ctx.Done():
		return Principal{}, ctx.Err()
	}
}

// lookup returns the live entry of k.
func (c *Cached) lookup(k [32]byte) (Principal, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if ok && now.Before(e.expires) {
		return e.p, true
	}
	return Principal{}, false
}

// store caches p under k unless the cache was flushed since gen.
func (c *Cached) store(k [32]byte, gen uint64, p Principal) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	cost := principalCost(p)
	if cost > c.max {
		return
	}
	if old, ok := c.entries[k]; ok {
		c.bytes -= old.cost
		delete(c.entries, k)
	}
	if c.bytes+cost > c.max {
		for k2, e2 := range c.entries { // drop expired entries, else everything
			if !now.Before(e2.expires) {
				delete(c.entries, k2)
				c.bytes -= e2.cost
			}
		}
		if c.bytes+cost > c.max {
			c.entries, c.bytes = map[[32]byte]cachedPrincipal{}, 0 // a cleared map keeps its buckets
		}
	}
	c.entries[k] = cachedPrincipal{p: p, expires: now.Add(c.ttl), cost: cost}
	c.bytes += cost
}

// Flush forgets every cached authentication, so the next request of each
// caller is checked against the store again. Call it after users, passwords
// or permissions change.
func (c *Cached) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.bytes = map[[32]byte]cachedPrincipal{}, 0
	c.gen++
}
