package natsjs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

const (
	// ackTimeout bounds the wait for the server to confirm an ack.
	ackTimeout = 5 * time.Second
	// transientBackoff paces retries after transient pull errors.
	transientBackoff = 250 * time.Millisecond
)

// Consume implements events.Consumer with a durable pull consumer and
// explicit acks. The handler runs on the calling goroutine, one message at a
// time; while it runs, the message's ack deadline is extended every
// quarter of AckWait. Acks are confirmed by the server (double ack) before the next
// message is handled, so a restarted consumer does not see acknowledged messages
// again. When ctx ends, messages already buffered but not handled are
// nak'ed without delay, so the next consumer with the same durable name gets
// them at once instead of after AckWait. With events.WithEphemeral it uses
// an ordered consumer of its own instead (ephemeral.go).
func (b *Bus) Consume(ctx context.Context, durable, subjectFilter string, h events.Handler, opts ...events.ConsumeOption) error {
	if durable == "" || h == nil {
		return fmt.Errorf("%w: durable name and handler are required", events.ErrInvalidConsumer)
	}
	if !b.startConsumer() {
		return events.ErrClosed
	}
	defer b.consumers.Done()

	o := events.NewConsumeOptions(opts...)
	if o.Ephemeral {
		return b.consumeEphemeral(ctx, durable, subjectFilter, h, o)
	}
	cons, err := b.durable(ctx, durable, subjectFilter, o, o.MaxInFlight)
	if cons == nil {
		return err
	}
	it, stopCtx, stop, err := b.messages(ctx, cons, durable, o.MaxInFlight)
	if err != nil {
		return err
	}
	defer stop()

	log := b.log.With("stream", b.jsName, "consumer", durable)
	for {
		jm, err := it.Next()
		if err != nil {
			if stop, err := b.iteratorError(stopCtx, ctx, log, durable, err); stop {
				return err
			}
			continue
		}
		if stopCtx.Err() != nil {
			_ = jm.Nak()
			continue
		}
		b.handle(stopCtx, log, jm, h, o)
	}
}

// durable creates or updates the durable pull consumer with at most
// maxAckPending messages unacknowledged. A nil consumer with a nil error
// means ctx ended.
func (b *Bus) durable(ctx context.Context, durable, subjectFilter string, o events.ConsumeOptions, maxAckPending int) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       durable,
		FilterSubject: b.wire(subjectFilter),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       o.AckWait,
		MaxDeliver:    o.MaxDeliver,
		MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = -1
	}
	// Only a new consumer starts at StartSequence; the server refuses to
	// change an existing one's deliver policy, so that one keeps its own.
	switch cur, err := b.js.Consumer(ctx, b.jsName, durable); {
	case err == nil:
		cfg.DeliverPolicy, cfg.OptStartSeq = cur.CachedInfo().Config.DeliverPolicy, cur.CachedInfo().Config.OptStartSeq
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		if o.StartSequence > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.StartSequence
		}
	case ctx.Err() != nil:
		return nil, nil
	case errors.Is(err, jetstream.ErrInvalidConsumerName):
		return nil, fmt.Errorf("%w: %s: %w", events.ErrInvalidConsumer, durable, err)
	default:
		return nil, fmt.Errorf("natsjs: consumer %s on %s: %w", durable, b.jsName, err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, b.jsName, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		if errors.Is(err, jetstream.ErrInvalidConsumerName) || errors.Is(err, jetstream.ErrInvalidSubject) {
			return nil, fmt.Errorf("%w: %s: %w", events.ErrInvalidConsumer, durable, err)
		}
		return nil, fmt.Errorf("natsjs: consumer %s on %s: %w", durable, b.jsName, err)
	}
	return cons, nil
}

// DeleteConsumer implements events.ConsumerDeleter.
func (b *Bus) DeleteConsumer(ctx context.Context, durable string) error {
	err := b.js.DeleteConsumer(ctx, b.jsName, durable)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("natsjs: delete consumer %s on %s: %w", durable, b.jsName, err)
	}
	return nil
}

var _ events.ConsumerDeleter = (*Bus)(nil)

// iteratorError classifies an error of the message iterator: stop says
// whether the consume loop ends, with err as its result (nil when ctx
// ended). Transient errors are logged and paced (transientBackoff).
func (b *Bus) iteratorError(stopCtx, ctx context.Context, log *slog.Logger, durable string, err error) (stop bool, _ error) {
	switch {
	case errors.Is(err, jetstream.ErrMsgIteratorClosed):
		if ctx.Err() != nil {
			return true, nil
		}
		if b.stopCtx.Err() != nil {
			return true, events.ErrClosed
		}
		return true, fmt.Errorf("natsjs: consume %s: %w", durable, err)
	case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConnectionClosed):
		if b.stopCtx.Err() != nil {
			return true, events.ErrClosed
		}
		return true, fmt.Errorf("natsjs: consume %s: %w", durable, err)
	default:
		// Missed heartbeats and similar are transient: the iterator
		// keeps pulling after reconnects.
		log.Warn("consume", "err", err)
		select {
		case <-stopCtx.Done():
		case <-time.After(transientBackoff):
		}
		return false, nil
	}
}

// handle runs h on jm, extending jm's ack deadline while it runs (AckWait
// bounds how long a dead process holds a message, not how long a handler
// may take), and acks or nak's it.
func (b *Bus) handle(ctx context.Context, log *slog.Logger, jm jetstream.Msg, h events.Handler, o events.ConsumeOptions) {
	m := b.toMsg(jm)
	stopExtending := extendWhile(log, []jetstream.Msg{jm}, o.AckWait)
	err := h(ctx, m)
	stopExtending()
	if err != nil {
		delay := events.RetryDelayOf(err, o.RetryDelay)
		if ctx.Err() != nil {
			delay = 0 // shutting down: let the next consumer have it now
		}
		log.Warn("handler failed; redelivering", "subject", m.Subject, "seq", m.Sequence,
			"delivered", m.NumDelivered, "retry_in", delay, "err", err)
		if nerr := jm.NakWithDelay(delay); nerr != nil {
			log.Error("nak", "seq", m.Sequence, "err", nerr)
		}
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := jm.DoubleAck(actx); err != nil {
		// The message comes back after AckWait: at-least-once.
		log.Error("ack", "seq", m.Sequence, "err", err)
	}
}

func (b *Bus) toMsg(jm jetstream.Msg) events.Msg {
	m := events.Msg{Subject: b.unwire(jm.Subject()), Data: jm.Data()}
	for k, v := range jm.Headers() {
		if k == jetstream.MsgIDHeader {
			if len(v) > 0 {
				m.MsgID = v[0]
			}
			continue
		}
		if len(v) > 0 {
			if m.Headers == nil {
				m.Headers = make(map[string]string)
			}
			m.Headers[k] = v[0]
		}
	}
	if md, err := jm.Metadata(); err == nil {
		m.Sequence = md.Sequence.Stream
		m.NumDelivered = md.NumDelivered
		m.Published = md.Timestamp
		m.NumPending = md.NumPending
	}
	received(m)
	return m
}

// received records a consumer span of m's trace (when its headers carry a
// sampled one) from the time the stream stored m until it was delivered
// here: the time m waited in the stream, shown between the publisher's
// span and the handler's. The handler's own spans stay children of the
// publisher's span, whose context m's headers keep.
func received(m events.Msg) {
	if len(m.Headers) == 0 {
		return
	}
	parent := tracing.Extract(context.Background(), m.Headers)
	if !trace.SpanContextFromContext(parent).IsSampled() {
		return
	}
	var opts []trace.SpanStartOption
	if !m.Published.IsZero() {
		opts = append(opts, trace.WithTimestamp(m.Published))
	}
	_, span := tracing.StartWith(parent, "nats receive "+m.Subject, trace.SpanKindConsumer, opts...)
	span.SetAttributes(attribute.String("messaging.system", "nats"),
		attribute.String("messaging.destination.name", m.Subject), attribute.String("messaging.message.id", m.MsgID),
		attribute.Int64("messaging.nats.sequence", int64(m.Sequence)),      //nolint:gosec // a stream sequence fits
		attribute.Int64("messaging.nats.delivered", int64(m.NumDelivered))) //nolint:gosec // a delivery count fits
	span.End()
}

// messages opens cons's message iterator with up to inFlight messages
// buffered. When ctx ends or the bus stops, the iterator drains (not
// stops: Next keeps returning what is already buffered, which the caller
// nak's, then ErrMsgIteratorClosed); stopCtx ends then. stop releases it.
func (b *Bus) messages(ctx context.Context, cons jetstream.Consumer, durable string, inFlight int) (
	it jetstream.MessagesContext, stopCtx context.Context, stop func(), err error) {
	it, err = cons.Messages(jetstream.PullMaxMessages(inFlight), jetstream.PullExpiry(pullExpiry))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("natsjs: consume %s: %w", durable, err)
	}
	stopCtx, cancel := context.WithCancel(ctx)
	stopWatch := context.AfterFunc(stopCtx, it.Drain)
	unlink := context.AfterFunc(b.stopCtx, cancel)
	return it, stopCtx, func() {
		it.Stop()
		unlink()
		stopWatch()
		cancel()
	}, nil
}

// startConsumer registers a running consumer (Close waits for it to
// return: call b.consumers.Done); false when the bus is closing.
func (b *Bus) startConsumer() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.isClosing {
		return false
	}
	b.consumers.Add(1)
	return true
}

// pullExpiry bounds how long one pull request of a consumer's iterator
// waits at the server (nats.go's default is 30 s). On a loaded machine
// (2 cores, 7 busy processes) about one run in 60 of a 300-event backlog
// stalled with events in the stream until the pull request expired: 30 s
// with the default, 5 s with this (measured; the cause inside the client
// was not found). A new pull every 5 s per idle consumer costs nothing.
const pullExpiry = 5 * time.Second
