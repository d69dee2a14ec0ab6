package memory

import (
	"context"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
)

// maxFences bounds the remembered tag versions; beyond it they are all
// dropped and the floor rises to the highest of them (safe: builds older
// than the floor are refused, which only costs a cache miss).
const maxFences = 100_000

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
	if len(c.fences)+len(tags) > maxFences {
		for _, v := range c.fences {
			c.floor = max(c.floor, v)
		}
		clear(c.fences)
	}
	for _, t := range tags {
		c.fences[t] = max(c.fences[t], version)
	}
	c.invalidateLocked(tags, version)
	return nil
}
