// Package outbox moves committed change events from the store's outbox to
// the event stream. Writers append events in the same SQL transaction as
// their data (store.Tx.AppendOutbox); the relay claims them in commit order,
// publishes them with the outbox MsgID as the JetStream deduplication id and
// acks them, so an event is published at least once and stored once even
// when the relay crashes between publishing and acking.
package outbox

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/trace"
)

// Relay publishes outbox events.
type Relay struct {
	store     store.OutboxRelay
	publisher events.Publisher
	log       *slog.Logger
	batch     int
	idle      time.Duration
	maxIdle   time.Duration
	wake      chan struct{}
	// pending holds claimed events not yet published after a failure; they
	// are retried before anything newer is claimed, keeping commit order.
	pending []store.OutboxEvent
	// published and failures count events published and failed publish
	// attempts (Stats).
	published, failures atomic.Int64
}

// Stats are a relay's counters since it was built.
type Stats struct {
	Published, PublishFailures int64
}

// Stats returns the counters; safe to call concurrently with Run.
func (r *Relay) Stats() Stats {
	return Stats{Published: r.published.Load(), PublishFailures: r.failures.Load()}
}

// Options tune a Relay; zero values get defaults.
type Options struct {
	// Batch is how many events are claimed at once (default 100).
	Batch int
	// Idle is the first poll delay when the outbox is empty (default 50ms);
	// it doubles up to MaxIdle (default 1s). Notify cuts it short.
	Idle, MaxIdle time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// New returns a relay from s to p.
func New(s store.OutboxRelay, p events.Publisher, opts Options) *Relay {
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.Idle <= 0 {
		opts.Idle = 50 * time.Millisecond
	}
	if opts.MaxIdle < opts.Idle {
		opts.MaxIdle = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Relay{store: s, publisher: p, log: opts.Logger, batch: opts.Batch,
		idle: opts.Idle, maxIdle: opts.MaxIdle, wake: make(chan struct{}, 1)}
}

// Notify tells the relay that a transaction with outbox events committed,
// so it publishes now instead of at the next poll. It never blocks.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run relays until ctx ends. Errors are logged and retried with backoff;
// Run returns nil when ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	delay := r.idle
	for {
		n, err := r.RelayOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			r.log.Warn("outbox relay", "err", err)
			delay = min(delay*2, r.maxIdle)
		case n == r.batch:
			delay = r.idle
			continue // more is waiting
		case n > 0:
			delay = r.idle
		default:
			delay = min(delay*2, r.maxIdle)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-r.wake:
			t.Stop()
			delay = r.idle
		case <-t.C:
		}
	}
}

// RelayOnce publishes the events left over from a failed attempt, or else
// claims one batch, publishes it in order and acks what was published. It
// returns how many events were published. Run calls it in a loop; it is
// not safe for concurrent use. Relays on several replicas may run at once:
// the store lets one of them claim at a time (store.OutboxRelay).
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	evs := r.pending
	if len(evs) == 0 {
		var err error
		if evs, err = r.store.ClaimOutbox(ctx, r.batch); err != nil || len(evs) == 0 {
			return 0, err
		}
	}
	acked := make([]int64, 0, len(evs))
	var pubErr error
	r.pending = nil
	for i, e := range evs {
		if err := r.publish(ctx, e); err != nil {
			// Stop at the first failure and retry from there: nothing newer
			// is published first. Should another relay claim them meanwhile
			// (the lease ran out, or it took over the store's relay lock),
			// it publishes them in order too and the stream drops the
			// duplicates by MsgID.
			pubErr = err
			r.pending = evs[i:]
			r.failures.Add(1)
			break
		}
		acked = append(acked, e.ID)
		r.published.Add(1)
	}
	if len(acked) > 0 {
		if err := r.store.AckOutbox(ctx, acked); err != nil {
			return len(acked), errors.Join(pubErr, err)
		}
	}
	return len(acked), pubErr
}

// publish publishes e under the trace of the transaction that appended it
// (the outbox row's traceparent): a producer span of that trace, whose
// context travels in the message headers to the consumers.
func (r *Relay) publish(ctx context.Context, e store.OutboxEvent) error {
	ctx, span := tracing.Start(tracing.WithTraceparent(ctx, e.Trace), "outbox.publish "+e.Subject, trace.SpanKindProducer)
	ev := events.Event{Subject: e.Subject, MsgID: e.MsgID, Data: e.Payload}
	if e.Trace != "" {
		ev.Headers = map[string]string{}
		tracing.Inject(ctx, ev.Headers)
	}
	err := r.publisher.Publish(ctx, ev)
	tracing.End(span, err)
	return err
}
