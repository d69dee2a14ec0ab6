package responsecache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
)

// Invalidator defaults.
const (
	// DefaultIndexWait bounds the wait for the indexer per event before the
	// event is retried.
	DefaultIndexWait = 30 * time.Second
)

// Source is what the invalidator asks the domain (pkg/delivery.Service):
// when the index shows a transaction, and which tags a change touches.
type Source interface {
	// WaitForVersion waits until the index shows version minVersion, at
	// most maxWait.
	WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error)
	// ChangeTags returns the cache tags ev makes stale; it is called once
	// the index shows ev's transaction.
	ChangeTags(ctx context.Context, ev changes.Event) ([]string, error)
}

// Invalidator evicts cached answers when a change event makes them stale.
// For each event (pkg/changes.Event, in stream order) it waits until the
// index shows the event's transaction, asks the Source which tags the
// change touches and invalidates them fenced at the transaction
// (cache.Cache.InvalidateTagsAt), so an answer rendered from older index
// data cannot be stored afterwards.
//
// Replicas sharing a cache (Redis) share one durable consumer: each event
// is handled once across them, and a restarted replica continues where the
// consumer left off. Each replica with its own memory cache needs every
// event instead: PerProcess makes it read through an ephemeral consumer of
// its own, which the server forgets when the process goes away (a durable
// per pod would be left behind on the NATS server by every restart).
type Invalidator struct {
	bus     events.Consumer
	src     Source
	c       *Cache
	durable string
	log     *slog.Logger
	wait    time.Duration
	// since is set for a per-process invalidator (PerProcess).
	since time.Time
}

// Invalidator returns the invalidator of c, consuming from bus with the
// durable consumer durable (see PerProcess for a per-process cache) and
// asking src. With no storage or no src, Run idles until its context ends.
func (c *Cache) Invalidator(bus events.Consumer, durable string, src Source) *Invalidator {
	return &Invalidator{bus: bus, src: src, c: c, durable: durable,
		log: c.log.With("worker", "delivery-invalidator"), wait: DefaultIndexWait}
}

// PerProcess makes iv consume through an ephemeral consumer of this process
// (events.WithEphemeral; the durable name becomes its name prefix)
// starting with the events stored since cacheStart minus changes.ClockSkewMargin.
// cacheStart is when the process's cache was empty, before it served
// anything: every event that can make a cached answer stale is stored
// after it, so no event is missed between the start and the subscription;
// the few replayed ones only evict what is not cached yet. It returns iv.
//
// The remaining gap: an answer cached after the start but rendered from an
// index that had not yet applied an event stored before cacheStart minus
// the margin (an indexer lagging more than changes.ClockSkewMargin at startup)
// stays stale until its TTL or the next change to the same tags.
func (iv *Invalidator) PerProcess(cacheStart time.Time) *Invalidator {
	iv.since = cacheStart.Add(-changes.ClockSkewMargin)
	return iv
}

// Run consumes change events (changes.Subjects) until ctx ends, then
// returns nil.
func (iv *Invalidator) Run(ctx context.Context) error {
	if !iv.c.Enabled() || iv.src == nil {
		iv.log.Info("delivery: no response cache or index; invalidator idle")
		<-ctx.Done()
		return nil
	}
	if iv.durable == "" {
		return fmt.Errorf("responsecache: the invalidator needs a durable consumer name")
	}
	var opts []events.ConsumeOption
	if !iv.since.IsZero() {
		opts = append(opts, events.WithEphemeral(), events.WithStartTime(iv.since))
		iv.log.Info("delivery invalidator consuming (ephemeral, per process)", "name", iv.durable, "since", iv.since)
	} else {
		iv.log.Info("delivery invalidator consuming", "durable", iv.durable)
	}
	return iv.consumer().Consume(ctx, iv.bus, iv.durable, iv.evict, opts...)
}

// consumer is the invalidator's change-event loop (pkg/changes: malformed
// events dropped with a log line, a failed one retried after a second).
func (iv *Invalidator) consumer() changes.Consumer {
	return changes.Consumer{Name: "delivery", Log: iv.log}
}

// Handle processes one change event: nil acks it, an error retries it.
func (iv *Invalidator) Handle(ctx context.Context, m events.Msg) error {
	return iv.consumer().Handler(iv.evict)(ctx, m)
}

func (iv *Invalidator) evict(ctx context.Context, ev changes.Event, _ events.Msg) error {
	return iv.Evict(ctx, ev)
}

// Evict makes the cached answers ev makes stale unreachable: it waits
// until the index shows ev's transaction, asks the Source for the tags and
// invalidates them fenced at the transaction. Evicting an event twice is
// harmless, so the change stream calls it too, before it hands an event to
// its subscribers (a client re-fetching on the event must not get the
// cached old answer while the invalidator still lags). Without storage or
// a Source it does nothing.
func (iv *Invalidator) Evict(ctx context.Context, ev changes.Event) error {
	if !iv.c.Enabled() || iv.src == nil {
		return nil
	}
	if _, err := iv.src.WaitForVersion(ctx, ev.Transaction, iv.wait); err != nil {
		return fmt.Errorf("responsecache: wait for the index to show transaction %d: %w", ev.Transaction, err)
	}
	tags, err := iv.src.ChangeTags(ctx, ev)
	if err != nil {
		return err
	}
	err = iv.c.store.InvalidateTagsAt(ctx, ev.Transaction, tags...)
	if err != nil && !errors.Is(err, cache.ErrClosed) {
		return fmt.Errorf("responsecache: invalidate: %w", err)
	}
	iv.c.stats.invalidations.Add(1)
	iv.c.stats.evictedTags.Add(int64(len(tags)))
	iv.log.Debug("delivery: invalidated", "tx", ev.Transaction, "branch", ev.Branch, "tags", len(tags))
	return nil
}
