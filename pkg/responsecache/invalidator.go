package responsecache

import (
	"context"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/tagcache"
)

// Source is what the invalidator asks the domain (pkg/delivery.Service):
// the index answers are built from (its version, and a wait until it
// shows a transaction: tagcache.IndexFence), and which tags a change
// touches.
type Source interface {
	tagcache.Index
	// ChangeTags returns the cache tags ev makes stale; it is called once
	// the index shows ev's transaction.
	ChangeTags(ctx context.Context, ev changes.Event) ([]string, error)
}

// EarlySource is a Source that names tags to evict on receipt of an
// event, before the index shows it (tagcache.Invalidator.Early).
type EarlySource interface {
	EarlyChangeTags(ctx context.Context, ev changes.Event) ([]string, error)
}

// Invalidator returns the invalidator of c (tagcache.Invalidator under an
// IndexFence on src): for each change event it waits until the index
// shows the event's transaction, asks src which tags the change touches
// and evicts them fenced at the transaction, so an answer rendered from
// older index data cannot be stored afterwards. It consumes from bus with
// the durable consumer durable: replicas sharing a cache (Redis) share it.
// A replica with its own memory cache needs every event instead:
// PerProcess makes it read through an ephemeral consumer of its own.
//
// The remaining gap of PerProcess: an answer cached after the start but
// rendered from an index that had not yet applied an event stored before
// the start minus changes.ClockSkewMargin (an indexer lagging more than
// that at startup) stays stale until its TTL or the next change to the
// same tags. With no storage or no src, Run idles until its context ends.
func (c *Cache) Invalidator(bus events.Consumer, durable string, src Source) *tagcache.Invalidator {
	var (
		fence tagcache.Fence
		tags  tagcache.Tags
	)
	if src != nil {
		fence, tags = tagcache.IndexFence{Index: src}, src.ChangeTags
	}
	var store *tagcache.Store
	if c != nil {
		store = c.store
	}
	iv := tagcache.NewInvalidator(store, fence, tags, bus, durable, "delivery-invalidator")
	if e, ok := src.(EarlySource); ok {
		iv.Early(e.EarlyChangeTags)
	}
	return iv
}
