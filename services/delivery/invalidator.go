package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/events"
)

// Invalidator defaults.
const (
	DefaultInvalidatorSubject = changes.Subjects
	// DefaultIndexWait bounds the wait for the indexer per event before the
	// event is retried.
	DefaultIndexWait = 30 * time.Second
	// ClockSkewMargin is subtracted from a per-process invalidator's start
	// time: the stream stamps events with the NATS server's clock.
	ClockSkewMargin = 30 * time.Second
)

// Invalidator evicts cached Delivery responses when a change event makes
// them stale. For each event (pkg/changes.Event, in stream order) it
// waits until the index shows the event's transaction, asks the domain
// which tags the change touches (delivery.Service.ChangeTags) and
// invalidates them fenced at the transaction (cache.Cache.InvalidateTagsAt), so a response
// rendered from older index data cannot be stored afterwards.
//
// Replicas sharing a cache (Redis) share one durable consumer: each event
// is handled once across them, and a restarted replica continues where the
// consumer left off. Each replica with its own memory cache needs every
// event instead: PerProcess makes it read through an ephemeral consumer of
// its own, which the server forgets when the process goes away (a durable
// per pod would be left behind on the NATS server by every restart).
type Invalidator struct {
	bus     events.Consumer
	dom     *delivery.Service
	cache   cache.Cache
	durable string
	log     *slog.Logger
	wait    time.Duration
	// since is set for a per-process invalidator (PerProcess).
	since time.Time
	stats *counters
}

// Invalidator returns the cache invalidator of the group, consuming with
// the durable consumer durable (see PerProcess for a per-process cache).
// Run it as a worker of the delivery target.
// With no cache or no search engine configured, Run returns at once.
func (g *Group) Invalidator(bus events.Consumer, durable string) *Invalidator {
	return &Invalidator{bus: bus, dom: g.api.dom, cache: g.api.cache, durable: durable,
		log: g.api.log.With("worker", "delivery-invalidator"), wait: DefaultIndexWait, stats: &g.api.stats}
}

// PerProcess makes iv consume through an ephemeral consumer of this process
// (events.WithEphemeral; the durable name becomes its name prefix)
// starting with the events stored since cacheStart minus ClockSkewMargin.
// cacheStart is when the process's cache was empty, before it served
// anything: every event that can make a cached answer stale is stored
// after it, so no event is missed between the start and the subscription;
// the few replayed ones only evict what is not cached yet. It returns iv.
//
// The remaining gap: an answer cached after the start but rendered from an
// index that had not yet applied an event stored before cacheStart minus
// the margin (an indexer lagging more than ClockSkewMargin at startup)
// stays stale until its TTL or the next change to the same tags.
func (iv *Invalidator) PerProcess(cacheStart time.Time) *Invalidator {
	iv.since = cacheStart.Add(-ClockSkewMargin)
	return iv
}

// Run consumes change events until ctx ends, then returns nil.
func (iv *Invalidator) Run(ctx context.Context) error {
	if iv.cache == nil || iv.dom == nil {
		iv.log.Info("delivery: no response cache or index; invalidator idle")
		<-ctx.Done()
		return nil
	}
	if iv.durable == "" {
		return fmt.Errorf("delivery: the invalidator needs a durable consumer name")
	}
	opts := []events.ConsumeOption{events.WithRetryDelay(time.Second)}
	if !iv.since.IsZero() {
		opts = append(opts, events.WithEphemeral(), events.WithStartTime(iv.since))
		iv.log.Info("delivery invalidator consuming (ephemeral, per process)", "name", iv.durable, "since", iv.since)
	} else {
		iv.log.Info("delivery invalidator consuming", "durable", iv.durable)
	}
	return iv.bus.Consume(ctx, iv.durable, DefaultInvalidatorSubject, iv.Handle, opts...)
}

// Handle processes one change event: nil acks it, an error retries it.
func (iv *Invalidator) Handle(ctx context.Context, m events.Msg) error {
	ev, err := changes.Parse(m.Data)
	if err != nil {
		iv.log.Error("delivery: dropping malformed change event", "subject", m.Subject, "err", err)
		return nil
	}
	if _, err := iv.dom.WaitForVersion(ctx, ev.Transaction, iv.wait); err != nil {
		return fmt.Errorf("delivery: wait for the index to show transaction %d: %w", ev.Transaction, err)
	}
	tags, err := iv.dom.ChangeTags(ctx, ev)
	if err != nil {
		return err
	}
	err = iv.cache.InvalidateTagsAt(ctx, ev.Transaction, tags...)
	if err != nil && !errors.Is(err, cache.ErrClosed) {
		return fmt.Errorf("delivery: invalidate: %w", err)
	}
	iv.stats.invalidations.Add(1)
	iv.stats.evictedTags.Add(int64(len(tags)))
	iv.log.Debug("delivery: invalidated", "tx", ev.Transaction, "branch", ev.Branch, "tags", len(tags))
	return nil
}
