package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
)

// UnavailableCooldown is how long WithDeadline answers unavailable at
// once, without calling the cache, after a call found it unavailable: a
// down cache then costs one deadline per cooldown, not one per call.
const UnavailableCooldown = time.Second

// WithDeadline bounds every call of c with g's deadline (a few hundred
// milliseconds: a cache slower than that is worth less than no cache) and
// reports an unreachable or slow cache as component.ErrUnavailable; for
// UnavailableCooldown after that, calls fail fast (Ping still asks the
// cache). The Delivery group treats any cache error as a miss and serves
// uncached. Ping of c is kept.
func WithDeadline(c Cache, g component.Guard) Cache {
	return &deadlineCache{c: c, g: g}
}

type deadlineCache struct {
	c         Cache
	g         component.Guard
	downUntil atomic.Int64 // unix nanoseconds; calls fail fast before it
}

// do runs fn (the call op, named in its span) under the deadline unless the cache was found unavailable
// less than UnavailableCooldown ago.
func (d *deadlineCache) do(ctx context.Context, op string, fn func(context.Context) error) error {
	if time.Now().UnixNano() < d.downUntil.Load() {
		return &component.UnavailableError{Component: d.g.Name, Err: errCoolingDown}
	}
	err := d.g.Op(ctx, op, fn)
	if errors.Is(err, component.ErrUnavailable) {
		d.downUntil.Store(time.Now().Add(UnavailableCooldown).UnixNano())
	}
	return err
}

var errCoolingDown = errors.New("failed recently; not asked again yet")

func (d *deadlineCache) Get(ctx context.Context, key string) (e Entry, ok bool, err error) {
	err = d.do(ctx, "Get", func(ctx context.Context) error { e, ok, err = d.c.Get(ctx, key); return err })
	return e, ok, err
}

func (d *deadlineCache) Set(ctx context.Context, key string, e Entry, tags []string, ttl time.Duration) error {
	return d.do(ctx, "Set", func(ctx context.Context) error { return d.c.Set(ctx, key, e, tags, ttl) })
}

func (d *deadlineCache) InvalidateTags(ctx context.Context, tags ...string) error {
	return d.do(ctx, "InvalidateTags", func(ctx context.Context) error { return d.c.InvalidateTags(ctx, tags...) })
}

func (d *deadlineCache) Close() error { return d.c.Close() }

// Ping is the cache's Ping under the deadline (nil when it has none, as
// the memory cache).
func (d *deadlineCache) Ping(ctx context.Context) error { return d.g.Ping(ctx, d.c) }

func (d *deadlineCache) SetAt(ctx context.Context, key string, e Entry, tags []string, ttl time.Duration, builtAt int64) (stored bool, err error) {
	err = d.do(ctx, "SetAt", func(ctx context.Context) error {
		stored, err = d.c.SetAt(ctx, key, e, tags, ttl, builtAt)
		return err
	})
	return stored, err
}

func (d *deadlineCache) InvalidateTagsAt(ctx context.Context, version int64, tags ...string) error {
	return d.do(ctx, "InvalidateTagsAt", func(ctx context.Context) error { return d.c.InvalidateTagsAt(ctx, version, tags...) })
}
