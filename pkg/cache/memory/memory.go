// Package memory is the embedded cache.Cache: a bounded LRU with TTLs and a
// tag index, in process memory.
package memory

import (
	"container/list"
	"context"
	"math"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
)

// DefaultMaxBytes is the bound of Options left zero.
const DefaultMaxBytes = 64 << 20

// What an entry costs beyond its key, value, ETag and tags: EntryOverhead
// for the entry itself (its record, its list element and its map entry),
// TagOverhead for each of its tags (the string in the entry and its
// membership in the tag index: a tag naming one object has a set of its
// own). TestMaxBytesBoundsTheHeap measures them.
const (
	EntryOverhead = 256
	TagOverhead   = 176
)

// fenceOverhead is what a remembered tag version costs beyond the tag
// (its map entry); the fences are bounded by MaxBytes/16.
const fenceOverhead = 64

// Options bound the cache. Zero values take the defaults.
type Options struct {
	// MaxEntries, when positive, also bounds the number of entries; the
	// least recently used entry is evicted beyond it. Zero: only MaxBytes.
	MaxEntries int
	// MaxBytes bounds the memory of the entries: the sum of their key,
	// value, ETag and tag sizes plus EntryOverhead per entry and
	// TagOverhead per tag; beyond it the least recently used entries are
	// evicted. An entry larger than MaxBytes on its own is not stored.
	// The remembered tag versions (SetAt's fences) take at most another
	// sixteenth of it.
	MaxBytes int64
	// Now is the clock (default time.Now); tests may inject one.
	Now func() time.Time
}

type item struct {
	key     string
	entry   cache.Entry
	tags    []string
	expires time.Time // zero: never
	size    int64
	builtAt int64 // SetAt's version; math.MinInt64 for Set
}

// Cache is a bounded in-memory cache.Cache.
type Cache struct {
	opts Options

	mu     sync.Mutex
	lru    *list.List               // front = most recently used; values *item
	items  map[string]*list.Element // by key
	tags   map[string]map[string]struct{}
	bytes  int64
	closed bool

	fences     map[string]int64 // tag → highest InvalidateTagsAt version
	fenceBytes int64            // their cost: len(tag) + fenceOverhead each
	floor      int64            // fences forgotten: nothing older may be set
}

var _ cache.Cache = (*Cache)(nil)

// New returns an empty cache.
func New(opts Options) *Cache {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = math.MaxInt
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{opts: opts, lru: list.New(), items: map[string]*list.Element{}, tags: map[string]map[string]struct{}{}, fences: map[string]int64{}}
}

// Get implements cache.Cache. The returned Value is shared with the cache and
// must not be modified.
func (c *Cache) Get(_ context.Context, key string) (cache.Entry, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cache.Entry{}, false, cache.ErrClosed
	}
	el, ok := c.items[key]
	if !ok {
		return cache.Entry{}, false, nil
	}
	it := el.Value.(*item)
	if !it.expires.IsZero() && !c.opts.Now().Before(it.expires) {
		c.remove(el)
		return cache.Entry{}, false, nil
	}
	c.lru.MoveToFront(el)
	return it.entry, true, nil
}

// newItem is an entry ready to store: the value kept as it is (Set takes
// it over), tags copied, size counted.
func newItem(key string, e cache.Entry, tags []string) *item {
	it := &item{key: key, entry: cache.Entry{Value: e.Value, ETag: e.ETag}, tags: append([]string(nil), tags...),
		builtAt: math.MinInt64}
	it.size = int64(len(key) + len(e.Value) + len(e.ETag) + EntryOverhead)
	for _, t := range tags {
		it.size += int64(len(t) + TagOverhead)
	}
	return it
}

// Set implements cache.Cache. The value is kept, not copied.
func (c *Cache) Set(_ context.Context, key string, e cache.Entry, tags []string, ttl time.Duration) error {
	it := newItem(key, e, tags)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cache.ErrClosed
	}
	c.setLocked(it, ttl)
	return nil
}

// setLocked stores it; c.mu must be held.
func (c *Cache) setLocked(it *item, ttl time.Duration) {
	key := it.key
	if ttl > 0 {
		it.expires = c.opts.Now().Add(ttl)
	}
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	if it.size > c.opts.MaxBytes {
		return // too big to cache; the old entry is gone, which is safe
	}
	c.items[key] = c.lru.PushFront(it)
	c.bytes += it.size
	for _, t := range it.tags {
		keys := c.tags[t]
		if keys == nil {
			keys = map[string]struct{}{}
			c.tags[t] = keys
		}
		keys[key] = struct{}{}
	}
	for c.lru.Len() > c.opts.MaxEntries || c.bytes > c.opts.MaxBytes {
		c.remove(c.lru.Back())
	}
}

// InvalidateTags implements cache.Cache.
func (c *Cache) InvalidateTags(_ context.Context, tags ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cache.ErrClosed
	}
	c.invalidateLocked(tags, math.MaxInt64)
	return nil
}

// invalidateLocked removes the entries of tags built before version; c.mu
// must be held.
func (c *Cache) invalidateLocked(tags []string, version int64) {
	for _, t := range tags {
		for key := range c.tags[t] {
			if el, ok := c.items[key]; ok && el.Value.(*item).builtAt < version {
				c.remove(el)
			}
		}
	}
}

// Bytes is the cost of the entries held, as MaxBytes counts it.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Len returns the number of entries (expired ones included until touched).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Close drops all entries.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cache.ErrClosed
	}
	c.closed = true
	c.lru.Init()
	c.items, c.tags, c.bytes, c.fences, c.fenceBytes = nil, nil, 0, nil, 0
	return nil
}

// remove deletes el and its tag memberships; c.mu must be held.
func (c *Cache) remove(el *list.Element) {
	it := el.Value.(*item)
	c.lru.Remove(el)
	delete(c.items, it.key)
	c.bytes -= it.size
	for _, t := range it.tags {
		if keys := c.tags[t]; keys != nil {
			delete(keys, it.key)
			if len(keys) == 0 {
				delete(c.tags, t)
			}
		}
	}
}
