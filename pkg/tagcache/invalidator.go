package tagcache

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

// startRetry is how long Run waits before it asks a Starter fence for its
// start position again.
const startRetry = time.Second

// Tags returns the cache tags a change event makes stale (the domain's
// rule); it is called once the fence has reached the event's transaction.
type Tags func(ctx context.Context, ev changes.Event) ([]string, error)

// Invalidator evicts stored answers when a change event makes them stale.
// For each event (pkg/changes.Event, in stream order) it lets the fence
// reach the event's transaction, asks Tags which tags the change touches,
// evicts them fenced at the transaction (Store.Invalidate) and tells the
// fence it applied the event.
//
// It consumes through a durable consumer (replicas sharing a storage
// share it: each event is handled once across them, and a restarted
// replica continues where it left off) or, for a storage of one process,
// through an ephemeral consumer of its own (PerProcess), which the server
// forgets when the process goes away.
type Invalidator struct {
	store *Store
	fence Fence
	tags  Tags
	bus   events.Consumer
	name  string
	// worker names the invalidator in its log lines.
	worker string
	log    *slog.Logger
	// since is set for a per-process invalidator (PerProcess).
	since time.Time
	// early names the tags evicted on receipt, before the fence reaches
	// the event (Early); nil: none.
	early Tags
}

// NewInvalidator returns the invalidator of s under fence f, asking tags;
// it consumes from bus with the consumer name (a durable, or the name
// prefix of an ephemeral consumer, PerProcess) and logs as worker. Without
// storage, fence, tags or bus, Run idles until its context ends; without
// storage, fence or tags, Evict does nothing.
func NewInvalidator(s *Store, f Fence, tags Tags, bus events.Consumer, name, worker string) *Invalidator {
	return &Invalidator{store: s, fence: f, tags: tags, bus: bus, name: name, worker: worker, log: s.Logger().With("worker", worker)}
}

// PerProcess makes iv consume through an ephemeral consumer of this
// process (events.WithEphemeral; the name becomes its prefix) starting
// with the events stored since start minus changes.ClockSkewMargin. start
// is when the process's storage was empty, before it served anything:
// every event that can make a stored answer stale is stored after it, so
// none is missed between the start and the subscription; the few replayed
// ones only evict what is not stored yet. It returns iv.
func (iv *Invalidator) PerProcess(start time.Time) *Invalidator {
	iv.since = start.Add(-changes.ClockSkewMargin)
	return iv
}

// Early makes iv evict the tags early names as soon as it receives an
// event, fenced at its transaction, before it waits for the fence: an
// answer of those tags built meanwhile (at an older position) is then not
// stored, so readers are answered from the source while it applies the
// change and see it there as soon as it shows it (a large change that the
// source shows some time before its fence reaches it: the index shows a
// promote's parent before the version is recorded). The event's tags are
// evicted again once the fence reached it, as always. It returns iv.
func (iv *Invalidator) Early(early Tags) *Invalidator {
	iv.early = early
	return iv
}

func (iv *Invalidator) active() bool { return iv.store.Enabled() && iv.fence != nil && iv.tags != nil }

// Run starts the fence (a Starter, retried every startRetry while it
// fails; nothing is served or stored until then) and consumes change
// events (changes.Subjects) until ctx ends, then returns nil.
func (iv *Invalidator) Run(ctx context.Context) error {
	if !iv.active() || iv.bus == nil {
		iv.log.Info("no cache storage or source; invalidator idle")
		<-ctx.Done()
		return nil
	}
	if iv.name == "" {
		return errors.New("tagcache: the invalidator needs a consumer name")
	}
	if st, ok := iv.fence.(Starter); ok {
		for {
			err := st.Start(ctx)
			if err == nil {
				break
			}
			iv.log.WarnContext(ctx, "cache start position unavailable; retrying", "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(startRetry):
			}
		}
	}
	var opts []events.ConsumeOption
	if !iv.since.IsZero() {
		opts = append(opts, events.WithEphemeral(), events.WithStartTime(iv.since))
		iv.log.Info("invalidator consuming (ephemeral, per process)", "name", iv.name, "since", iv.since)
	} else {
		iv.log.Info("invalidator consuming", "durable", iv.name)
	}
	return iv.consumer().Consume(ctx, iv.bus, iv.name, iv.evict, opts...)
}

// consumer is the invalidator's change-event loop (pkg/changes: malformed
// events dropped with a log line, a failed one retried after a second).
func (iv *Invalidator) consumer() changes.Consumer {
	return changes.Consumer{Name: iv.worker, Log: iv.log}
}

func (iv *Invalidator) evict(ctx context.Context, ev changes.Event, _ events.Msg) error {
	return iv.Evict(ctx, ev)
}

// Start starts a Starter fence once (Run does it, retrying); other fences
// need no start.
func (iv *Invalidator) Start(ctx context.Context) error {
	if st, ok := iv.fence.(Starter); ok && iv.active() {
		return st.Start(ctx)
	}
	return nil
}

// Handle processes one change event: nil acks it, an error retries it.
func (iv *Invalidator) Handle(ctx context.Context, m events.Msg) error {
	return iv.consumer().Handler(iv.evict)(ctx, m)
}

// Evict makes the stored answers ev makes stale unreachable: the fence
// reaches ev's transaction, the tags are evicted fenced at it, and the
// fence learns it was applied. Evicting an event twice is harmless (the
// Delivery change stream calls it too, before it hands an event to its
// subscribers).
func (iv *Invalidator) Evict(ctx context.Context, ev changes.Event) error {
	if !iv.active() {
		return nil
	}
	if iv.early != nil {
		tags, err := iv.early(ctx, ev)
		if err != nil {
			return err
		}
		if len(tags) > 0 {
			if err := iv.store.c.InvalidateTagsAt(ctx, ev.Transaction, tags...); err != nil && !errors.Is(err, cache.ErrClosed) {
				return fmt.Errorf("%s: invalidate early: %w", iv.store.name, err)
			}
		}
	}
	if err := iv.fence.Reach(ctx, ev.Transaction); err != nil {
		return err
	}
	tags, err := iv.tags(ctx, ev)
	if err != nil {
		return err
	}
	if err := iv.store.Invalidate(ctx, ev.Transaction, tags); err != nil {
		return err
	}
	iv.fence.Applied(ev.Transaction)
	iv.log.Debug("invalidated", "tx", ev.Transaction, "branch", ev.Branch, "tags", len(tags))
	return nil
}
