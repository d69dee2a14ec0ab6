// Package tagcache is the one core of the tag caches (Delivery's response
// cache, pkg/responsecache, and Rendering's render cache,
// pkg/rendercache): answers stored in a cache.Cache the app hands in,
// tagged with what they were built from, fenced at a position, and
// evicted by the change events that touch their tags.
//
//   - Store keeps entries with the position read before they were built
//     (cache.Cache.SetAt fenced at it), so an eviction that happened while
//     an answer was built is not undone by storing it.
//   - A Fence says what that position is and when a change event may be
//     applied: IndexFence (Delivery: the index version; an event is
//     applied once the index shows its transaction) or OutboxFence
//     (Rendering: the newest change transaction of the store; answers are
//     served only while every event up to it has been applied).
//   - Invalidator consumes the change events (pkg/changes) and evicts, for
//     each, the tags the domain says it touches, fenced at its transaction.
//   - Stats count hits, misses, stored answers and evictions.
package tagcache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
)

// TTL is only a safety net: entries are evicted by the change events that
// touch them (Invalidator), or by the storage's own bounds, not by age.
const TTL = 24 * time.Hour

// Entry is one stored answer.
type Entry struct {
	Body []byte
	ETag string
	// At is the fence position read before the answer was built.
	At int64
}

// Store is a fenced store over one cache.Cache. A nil *Store, or one
// without storage, stores nothing. Its methods are safe for concurrent use.
type Store struct {
	c     cache.Cache
	name  string
	log   *slog.Logger
	stats counters
}

// NewStore returns a store in c (nil: nothing is stored); name prefixes
// its log messages. log nil discards.
func NewStore(c cache.Cache, name string, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{c: c, name: name, log: log}
}

// Enabled reports whether answers are stored.
func (s *Store) Enabled() bool { return s != nil && s.c != nil }

// Storage returns the underlying cache (nil when disabled).
func (s *Store) Storage() cache.Cache {
	if s == nil {
		return nil
	}
	return s.c
}

// Logger is the store's logger.
func (s *Store) Logger() *slog.Logger {
	if s == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.log
}

// Get returns the entry of key when it was built at or after position
// minAt. Storage errors count as misses (logged). It counts nothing: the
// caller knows whether a found entry is usable (Hit, Miss).
func (s *Store) Get(ctx context.Context, key string, minAt int64) (Entry, bool) {
	if !s.Enabled() {
		return Entry{}, false
	}
	e, ok, err := s.c.Get(ctx, key)
	if err != nil {
		s.log.WarnContext(ctx, s.name+": get", "error", err)
		return Entry{}, false
	}
	if !ok || len(e.Value) < frameHeader {
		return Entry{}, false
	}
	at := int64(binary.BigEndian.Uint64(e.Value))
	if at < minAt {
		return Entry{}, false
	}
	return Entry{Body: FrameBody(e.Value), ETag: e.ETag, At: at}, true
}

// Put stores e under key with tags, fenced at e.At, and reports whether
// it was kept (false also when an eviction at a later position refused
// it). Failures only cost a later miss. It copies e.Body once; an answer
// written into a frame (NewFrame, PutFramed) is kept without a copy.
func (s *Store) Put(ctx context.Context, key string, e Entry, tags []string) bool {
	if !s.Enabled() {
		return false
	}
	return s.PutFramed(ctx, key, append(NewFrame(len(e.Body)), e.Body...), e.ETag, e.At, tags)
}

// frameHeader is the room a frame keeps before its answer: the fence
// position.
const frameHeader = 8

// NewFrame returns an empty frame with room for an answer of n bytes:
// append the answer to it and store it with PutFramed.
func NewFrame(n int) []byte { return make([]byte, frameHeader, frameHeader+max(n, 0)) }

// FrameBody is the answer appended to frame (NewFrame).
func FrameBody(frame []byte) []byte { return frame[frameHeader:] }

// PutFramed is Put of the answer appended to frame (NewFrame), with etag,
// fenced at at. The storage keeps frame itself (cache.Cache takes over
// the value it is given): nothing may change it afterwards.
func (s *Store) PutFramed(ctx context.Context, key string, frame []byte, etag string, at int64, tags []string) bool {
	if !s.Enabled() || len(frame) < frameHeader {
		return false
	}
	binary.BigEndian.PutUint64(frame, uint64(at))
	stored, err := s.c.SetAt(ctx, key, cache.Entry{Value: frame, ETag: etag}, tags, TTL, at)
	if err != nil {
		s.log.WarnContext(ctx, s.name+": set", "error", err)
	}
	if stored {
		s.stats.stored.Add(1)
	}
	return stored
}

// Invalidate evicts the entries of tags built before position at, and
// refuses those built before it afterwards. A closed storage is no error.
func (s *Store) Invalidate(ctx context.Context, at int64, tags []string) error {
	if !s.Enabled() {
		return nil
	}
	if len(tags) > 0 {
		err := s.c.InvalidateTagsAt(ctx, at, tags...)
		if err != nil && !errors.Is(err, cache.ErrClosed) {
			return fmt.Errorf("%s: invalidate: %w", s.name, err)
		}
	}
	s.stats.invalidations.Add(1)
	s.stats.evictedTags.Add(int64(len(tags)))
	return nil
}

// Hit counts a lookup answered from the store, Miss one that was not.
func (s *Store) Hit() {
	if s != nil {
		s.stats.hits.Add(1)
	}
}

// Miss counts a lookup the store could not answer.
func (s *Store) Miss() {
	if s != nil {
		s.stats.misses.Add(1)
	}
}

// Stats count what a store did since it was built; the app exports them as
// Prometheus counters.
type Stats struct {
	// Hits were answered from the store, Misses were not; Stored answers
	// were kept.
	Hits, Misses, Stored int64
	// Invalidations are change events applied, EvictedTags the tags they
	// evicted.
	Invalidations, EvictedTags int64
}

type counters struct {
	hits, misses, stored, invalidations, evictedTags atomic.Int64
}

// Stats returns the counters (zero for a nil Store).
func (s *Store) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	c := &s.stats
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Stored: c.stored.Load(),
		Invalidations: c.invalidations.Load(), EvictedTags: c.evictedTags.Load()}
}
