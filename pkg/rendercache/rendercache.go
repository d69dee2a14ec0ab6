// Package rendercache keeps the answers of the Rendering group (rendered
// templates, stylesheets) per process, until a change event touches what
// they were built from.
//
// Renders read the store (the current Management view, read-your-writes),
// not the search index, so freshness is fenced on the store:
//
//   - Each lookup first reads W, the newest transaction that appended a
//     change event (store.Store.LastOutboxTransaction with
//     changes.SubjectPrefix; transactions without a change event, such as
//     job bookkeeping, do not move it).
//   - A cached answer is served only when this process's invalidator has
//     handled every change event up to W (Handled() >= W). The events
//     arrive in commit order, so every change committed before the lookup
//     has then evicted what it touched. Otherwise the answer is built
//     again (and may be stored).
//   - An answer is stored fenced at the W read before it was built
//     (cache.Cache.SetAt): an eviction for a later transaction removes it,
//     and one that happened while it was built refuses it.
//   - Answers are tagged with everything they read (Tags: object ids,
//     types listed, identifiers looked up); the invalidator evicts the tags
//     of each change event (the event's object ids, and the types,
//     ApiIdentifiers and GUIDs of those objects, read from the store).
//     Tags ignore branches: a change on any branch evicts the renders of
//     every branch that read the object, which covers inheritance.
//
// The storage is a bounded memory cache (pkg/cache/memory); every process
// has its own, with an ephemeral consumer of its own (Invalidator).
package rendercache

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
)

// Defaults of Options.
const (
	DefaultMaxBytes      = 64 << 20
	DefaultMaxEntryBytes = 1 << 20
	// ttl is only a safety net: entries go by eviction, or by LRU.
	ttl = 24 * time.Hour
)

// Options configure a Cache. Zero fields take the defaults.
type Options struct {
	// MaxBytes bounds the memory the entries take together
	// (DefaultMaxBytes); the least recently used go first. Negative:
	// nothing is cached.
	MaxBytes int64
	// MaxEntryBytes bounds one answer; larger ones are not stored
	// (DefaultMaxEntryBytes).
	MaxEntryBytes int
	Logger        *slog.Logger
}

// Fence reads the newest transaction that appended an event with a subject
// of the prefix (store.Store.LastOutboxTransaction).
type Fence interface {
	LastOutboxTransaction(ctx context.Context, subjectPrefix string) (int64, error)
}

// Cache is the render cache of one process. A nil *Cache caches nothing.
// Its methods are safe for concurrent use.
type Cache struct {
	store    cache.Cache
	fence    Fence
	maxEntry int
	log      *slog.Logger
	// handled is the newest change-event transaction the invalidator
	// applied (or the start position, see Invalidator.Run).
	handled atomic.Int64
	// floor: answers built before it are not stored (set at the start,
	// see Invalidator.Run); started tells that it is set.
	floor   atomic.Int64
	started atomic.Bool
	stats   counters
}

// New returns an empty cache whose lookups read the fence from f. With
// opts.MaxBytes < 0 it returns nil (no cache).
func New(f Fence, opts Options) *Cache {
	if opts.MaxBytes < 0 || f == nil {
		return nil
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxEntryBytes <= 0 {
		opts.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Cache{store: memory.New(memory.Options{MaxBytes: opts.MaxBytes, MaxEntries: 1 << 30}), fence: f,
		maxEntry: opts.MaxEntryBytes, log: opts.Logger}
}

// Entry is one cached answer.
type Entry struct {
	Body []byte
	ETag string
}

// Ticket is a lookup that missed: Put stores the answer built after it,
// fenced at the transaction the lookup read.
type Ticket struct {
	key string
	at  int64
}

// Get looks key up. It reads the fence (an unavailable store is an error:
// the build would fail too) and returns the cached entry when the
// invalidator is current; otherwise ok is false and the ticket lets Put
// store the answer built next. A nil Cache misses without reading.
func (c *Cache) Get(ctx context.Context, key string) (e Entry, t Ticket, ok bool, err error) {
	if c == nil {
		return Entry{}, Ticket{}, false, nil
	}
	w, err := c.fence.LastOutboxTransaction(ctx, changes.SubjectPrefix)
	if err != nil {
		return Entry{}, Ticket{}, false, err
	}
	t = Ticket{key: key, at: w}
	if !c.started.Load() || c.handled.Load() < w {
		c.stats.behind.Add(1)
		return Entry{}, t, false, nil
	}
	got, ok, err := c.store.Get(ctx, key)
	if err != nil || !ok {
		c.stats.misses.Add(1)
		return Entry{}, t, false, nil
	}
	c.stats.hits.Add(1)
	return Entry{Body: got.Value, ETag: got.ETag}, t, true, nil
}

// Put stores the answer built after the lookup t with its tags. Answers
// larger than MaxEntryBytes, or built before the invalidator started, are
// not stored.
func (c *Cache) Put(ctx context.Context, t Ticket, e Entry, tags []string) {
	if c == nil || t.key == "" || len(e.Body) > c.maxEntry || !c.started.Load() || t.at < c.floor.Load() {
		return
	}
	stored, err := c.store.SetAt(ctx, t.key, cache.Entry{Value: e.Body, ETag: e.ETag}, tags, ttl, t.at)
	if err != nil {
		c.log.WarnContext(ctx, "rendercache: set", "error", err)
	}
	if stored {
		c.stats.stored.Add(1)
	}
}

// GetOrBuild answers key from c when it is current (Get), else builds
// the answer and stores it (Put) with the tags build returns; a failed
// build or nil tags (an answer that must not be cached) is not stored. A
// nil Cache just builds. The entry is build's also when it fails.
func (c *Cache) GetOrBuild(ctx context.Context, key string, build func() (Entry, []string, error)) (Entry, error) {
	e, t, ok, err := c.Get(ctx, key)
	if err != nil {
		return Entry{}, err
	}
	if ok {
		return e, nil
	}
	e, tags, err := build()
	if err == nil && tags != nil {
		c.Put(ctx, t, e, tags)
	}
	return e, err
}

// Handled is the newest change-event transaction applied to the cache.
func (c *Cache) Handled() int64 {
	if c == nil {
		return 0
	}
	return c.handled.Load()
}

// start makes the cache usable from transaction p on: every change event
// committed after p reaches the invalidator, the older ones are reflected
// in anything built from now on.
func (c *Cache) start(p int64) {
	c.floor.Store(p)
	c.advance(p)
	c.started.Store(true)
}

// advance raises the handled position to tx.
func (c *Cache) advance(tx int64) {
	for {
		cur := c.handled.Load()
		if tx <= cur || c.handled.CompareAndSwap(cur, tx) {
			return
		}
	}
}

// Tags of cached answers; the invalidator evicts the same spellings.

// ObjectTag is an object read, or looked up and missing, on any branch.
func ObjectTag(id int64) string { return "o:" + strconv.FormatInt(id, 10) }

// TypeTag is a listing of the objects of a type (a new object of the type
// changes it).
func TypeTag(typ int64) string { return "t:" + strconv.FormatInt(typ, 10) }

// IdentTag is a lookup by ApiIdentifier or (normalized) GUID, found or
// not: an object taking the identifier changes it.
func IdentTag(ident string) string { return "i:" + ident }

// Cacheable reports whether an answer that read an object of type typ may
// be stored: user objects change without change events (and each caller
// sees only some of them), so an answer that read one is not.
func Cacheable(typ int64) bool { return typ != content.TypeUser }
