// Package rendercache keeps the answers of the Rendering group (rendered
// templates, stylesheets) per process, until a change event touches what
// they were built from. It is the pkg/tagcache core under an OutboxFence.
//
// Renders read the store (the current Management view, read-your-writes),
// not the search index, so freshness is fenced on the store:
//
//   - Each lookup first reads W, the newest transaction that appended a
//     change event (store.Store.LastOutboxTransaction with
//     changes.SubjectPrefix; transactions without a change event, such as
//     job bookkeeping, do not move it).
//   - A cached answer is served only when this process's invalidator has
//     handled every change event up to W (tagcache.OutboxFence.Current).
//     The events arrive in commit order, so every change committed before
//     the lookup has then evicted what it touched. Otherwise the answer is
//     built again (and may be stored).
//   - An answer is stored fenced at the W read before it was built
//     (tagcache.Store.Put): an eviction for a later transaction removes
//     it, and one that happened while it was built refuses it.
//   - Answers are tagged with everything they read (Tags: object ids,
//     types listed, identifiers looked up); the invalidator evicts the tags
//     of each change event (the event's object ids, and the types,
//     ApiIdentifiers and GUIDs of those objects, read from the store).
//     Tags ignore branches: a change on any branch evicts the renders of
//     every branch that read the object, which covers inheritance.
//
// The app hands in the storage: a bounded memory cache of the process
// (pkg/cache/memory), read through an ephemeral consumer of its own
// (Invalidator).
package rendercache

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/tagcache"
)

// Defaults of Options.
const (
	DefaultMaxBytes      = 64 << 20
	DefaultMaxEntryBytes = 1 << 20
)

// Options configure a Cache. Zero fields take the defaults.
type Options struct {
	// MaxEntryBytes bounds one answer; larger ones are not stored
	// (DefaultMaxEntryBytes).
	MaxEntryBytes int
	Logger        *slog.Logger
}

// Fence reads the newest transaction that appended an event with a subject
// of the prefix (store.Store.LastOutboxTransaction).
type Fence = tagcache.Outbox

// Cache is the render cache of one process. A nil *Cache caches nothing.
// Its methods are safe for concurrent use.
type Cache struct {
	store    *tagcache.Store
	fence    *tagcache.OutboxFence
	maxEntry int
	// behind counts the lookups not served because the invalidator was
	// not current.
	behind atomic.Int64
}

// New returns an empty cache storing in storage (the app's choice: a
// bounded memory cache of this process) whose lookups read the fence from
// f. Without storage or fence it returns nil (no cache).
func New(storage cache.Cache, f Fence, opts Options) *Cache {
	if storage == nil || f == nil {
		return nil
	}
	if opts.MaxEntryBytes <= 0 {
		opts.MaxEntryBytes = DefaultMaxEntryBytes
	}
	return &Cache{store: tagcache.NewStore(storage, "rendercache", opts.Logger), fence: tagcache.NewOutboxFence(f),
		maxEntry: opts.MaxEntryBytes}
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
	w, err := c.fence.Position(ctx)
	if err != nil {
		return Entry{}, Ticket{}, false, err
	}
	t = Ticket{key: key, at: w}
	if !c.fence.Current(w) {
		c.behind.Add(1)
		return Entry{}, t, false, nil
	}
	got, ok := c.store.Get(ctx, key, 0)
	if !ok {
		c.store.Miss()
		return Entry{}, t, false, nil
	}
	c.store.Hit()
	return Entry{Body: got.Body, ETag: got.ETag}, t, true, nil
}

// Put stores the answer built after the lookup t with its tags. Answers
// larger than MaxEntryBytes, or built before the invalidator started, are
// not stored.
func (c *Cache) Put(ctx context.Context, t Ticket, e Entry, tags []string) {
	if c == nil || t.key == "" || len(e.Body) > c.maxEntry || !c.fence.Admits(t.at) {
		return
	}
	c.store.Put(ctx, t.key, tagcache.Entry{Body: e.Body, ETag: e.ETag, At: t.at}, tags)
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
	return c.fence.Handled()
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
