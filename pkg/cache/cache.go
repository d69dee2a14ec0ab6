// Package cache is the one cache interface of the project: a tagged
// key/value store whose entries are evicted precisely when one of their
// tags is invalidated. It is the storage of the Delivery response cache
// (pkg/responsecache), which keeps rendered answers keyed by request and
// tagged with what they were built from.
//
// Tags are plain strings; by convention "obj:<branch>:<id>" for one object and
// "branch:<id>" for everything of a branch. Implementations: cache/memory
// (embedded, bounded LRU) and cache/redis (shared between replicas). Both
// pass the suite in cache/cachetest.
//
// A plain Set cannot close the race between building a response from old
// data and an invalidation that lands before it; SetAt and
// InvalidateTagsAt close it with versions (see fenced.go).
package cache

import (
	"context"
	"errors"
	"time"
)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("cache: closed")

// Entry is one cached response.
type Entry struct {
	Value []byte
	ETag  string
}

// Cache is a tagged key/value cache. All methods are safe for concurrent use.
type Cache interface {
	// Get returns the entry for key; ok is false on a miss (absent, expired
	// or evicted). A miss is not an error.
	Get(ctx context.Context, key string) (e Entry, ok bool, err error)
	// Set stores e under key, replacing any previous entry and its tags.
	// It takes over e.Value (an implementation may keep it without a
	// copy): the caller must not change it afterwards.
	// ttl <= 0 means no expiry (the entry may still be evicted).
	Set(ctx context.Context, key string, e Entry, tags []string, ttl time.Duration) error
	// InvalidateTags removes every key that was Set with any of tags. Keys
	// set later with those tags are not affected.
	InvalidateTags(ctx context.Context, tags ...string) error
	// SetAt is Set for an entry built from data at version builtAt (e.g.
	// the search index's change-tracking version read before the first
	// query). It stores nothing and reports false when one of tags was
	// invalidated at a version > builtAt. Check and store are atomic with
	// respect to InvalidateTagsAt.
	SetAt(ctx context.Context, key string, e Entry, tags []string, ttl time.Duration, builtAt int64) (stored bool, err error)
	// InvalidateTagsAt removes the keys of tags that were built before
	// version (SetAt with builtAt < version; plain Set counts as built
	// before every version): an entry built at or after it already shows
	// the change, however late the invalidation arrives. It also remembers,
	// per tag, the highest version that invalidated it (the fence SetAt
	// checks).
	// Implementations may forget these fences after a while (FenceTTL) or
	// raise a global floor instead (memory), never lower one.
	InvalidateTagsAt(ctx context.Context, version int64, tags ...string) error
	// Close releases resources.
	Close() error
}
