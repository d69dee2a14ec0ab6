package memory

import (
	"context"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
)

// SetAt implements cache.Cache.
func (c *Cache) SetAt(_ context.Context, key string, e cache.Entry, tags []string, ttl time.Duration, builtAt int64) (bool, error) {
	it := newItem(key, e, tags)
	it.builtAt = builtAt
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, cache.ErrClosed
	}
	if c.floor > builtAt {
		return false, nil
	}
	for _, t := range tags {
		if c.fences[t] > builtAt {
			return false, nil
		}
	}
	c.setLocked(it, ttl)
	return true, nil
}

// InvalidateTagsAt implements cache.Cache.
func (c *Cache) InvalidateTagsAt(_ context.Context, version int64, tags ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cache.ErrClosed
	}
	// The fences are bounded by MaxBytes/16: beyond it they are all
	// dropped and the floor rises to the highest of them (safe: builds
	// older than the floor are refused, which only costs a cache miss).
	add := int64(0)
	for _, t := range tags {
		add += int64(len(t) + fenceOverhead)
	}
	if c.fenceBytes+add > c.opts.MaxBytes/16 {
		for _, v := range c.fences {
			c.floor = max(c.floor, v)
		}
		c.fences, c.fenceBytes = map[string]int64{}, 0 // a cleared map keeps its buckets
	}
	for _, t := range tags {
		if _, ok := c.fences[t]; !ok {
			c.fenceBytes += int64(len(t) + fenceOverhead)
		}
		c.fences[t] = max(c.fences[t], version)
	}
	c.invalidateLocked(tags, version)
	return nil
}
