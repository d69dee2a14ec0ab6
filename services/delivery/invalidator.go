package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexing"
)

// Invalidator defaults.
const (
	DefaultInvalidatorSubject = "cms.changes.>"
	// DefaultIndexWait bounds the wait for the indexer per event before the
	// event is retried.
	DefaultIndexWait = 30 * time.Second
)

// Invalidator evicts cached Delivery responses when a change event makes
// them stale. For each event (pkg/content.ChangeEvent, in stream order) it
// waits until the index shows the event's transaction, asks the domain
// which tags the change touches (delivery.Service.ChangeTags) and
// invalidates them fenced at the transaction (cache.Fenced), so a response
// rendered from older index data cannot be stored afterwards.
//
// Each Delivery replica with its own memory cache needs its own consumer:
// give every replica a distinct durable name (e.g. "delivery-" + pod
// name). Replicas sharing a Redis cache may each run one too; the
// invalidations are idempotent.
type Invalidator struct {
	bus     events.Consumer
	dom     *delivery.Service
	cache   cache.Cache
	durable string
	log     *slog.Logger
	wait    time.Duration
}

// Invalidator returns the cache invalidator of the group, consuming with
// the durable consumer durable. Run it as a worker of the delivery target.
// With no cache or no search engine configured, Run returns at once.
func (g *Group) Invalidator(bus events.Consumer, durable string) *Invalidator {
	return &Invalidator{bus: bus, dom: g.api.dom, cache: g.api.cache, durable: durable,
		log: g.api.log.With("worker", "delivery-invalidator"), wait: DefaultIndexWait}
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
	iv.log.Info("delivery invalidator consuming", "durable", iv.durable)
	return iv.bus.Consume(ctx, iv.durable, DefaultInvalidatorSubject, iv.Handle, events.WithRetryDelay(time.Second))
}

// Handle processes one change event: nil acks it, an error retries it.
func (iv *Invalidator) Handle(ctx context.Context, m events.Msg) error {
	ev, err := indexing.ParseEvent(m.Data)
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
	if f, ok := iv.cache.(cache.Fenced); ok {
		err = f.InvalidateTagsAt(ctx, ev.Transaction, tags...)
	} else {
		err = iv.cache.InvalidateTags(ctx, tags...)
	}
	if err != nil && !errors.Is(err, cache.ErrClosed) {
		return fmt.Errorf("delivery: invalidate: %w", err)
	}
	iv.log.Debug("delivery: invalidated", "tx", ev.Transaction, "branch", ev.Branch, "tags", len(tags))
	return nil
}
