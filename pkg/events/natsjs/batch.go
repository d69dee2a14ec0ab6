package natsjs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
)

// gatherWait bounds the wait for the next message of a batch while the
// server reports more pending (it normally arrives at once).
const gatherWait = 100 * time.Millisecond

// ConsumeBatch implements events.Consumer with the durable pull consumer of
// Consume, allowing BatchSize unacknowledged messages. A batch is the
// first message the iterator returns plus those that follow while the
// server reports more pending for the consumer (Msg.NumPending) and the
// batch has room: a consumer that has caught up hands over one message
// without waiting. Acknowledgements of a batch are sent together and the
// last is confirmed by the server before the next batch is gathered.
// Messages left after a handler failure stay with this call: their ack
// deadline is extended (InProgress) until the retry delay has passed, so
// no later message can overtake them; the same happens while the handler
// runs, so AckWait bounds how long a crashed process holds messages rather
// than how long a batch may take. When ctx ends, the messages not handled
// are nak'ed without delay, in stream order, once the iterator has
// drained.
func (b *Bus) ConsumeBatch(ctx context.Context, durable, subjectFilter string, h events.BatchHandler, opts ...events.ConsumeOption) error {
	if durable == "" || h == nil {
		return fmt.Errorf("%w: durable name and handler are required", events.ErrInvalidConsumer)
	}
	o := events.NewConsumeOptions(opts...)
	if o.Ephemeral {
		return fmt.Errorf("%w: ConsumeBatch does not support ephemeral consumers", events.ErrInvalidConsumer)
	}
	b.mu.Lock()
	if b.isClosing {
		b.mu.Unlock()
		return events.ErrClosed
	}
	b.consumers.Add(1)
	b.mu.Unlock()
	defer b.consumers.Done()

	it, stopCtx, stop, err := b.messages(ctx, durable, subjectFilter, o, o.BatchSize)
	if it == nil {
		return err
	}
	defer stop()

	log := b.log.With("stream", b.jsName, "consumer", durable)
	// Messages held when ctx ends are released once the iterator has
	// drained: released earlier, they would come back to it.
	var held []jetstream.Msg
	defer func() { releaseAll(log, held) }()
	batch := make([]jetstream.Msg, 0, o.BatchSize)
	for {
		jm, err := it.Next()
		if err != nil {
			if stop, err := b.iteratorError(stopCtx, ctx, log, durable, err); stop {
				return err
			}
			continue
		}
		batch = append(batch[:0], jm)
		for len(batch) < o.BatchSize && moreComing(batch[len(batch)-1]) && stopCtx.Err() == nil {
			jm, err := it.Next(jetstream.NextMaxWait(gatherWait))
			if err != nil {
				if !errors.Is(err, nats.ErrTimeout) {
					log.Debug("gather batch", "err", err) // the next Next reports it again
				}
				break
			}
			batch = append(batch, jm)
		}
		// Redeliveries (after a stop or a crash) come back in no
		// particular order.
		slices.SortFunc(batch, func(a, b jetstream.Msg) int { return cmp.Compare(streamSeq(a), streamSeq(b)) })
		if stopCtx.Err() != nil {
			held = append(held, batch...)
			continue
		}
		held = append(held, b.handleBatch(stopCtx, log, batch, h, o)...)
	}
}

// streamSeq is jm's stream sequence.
func streamSeq(jm jetstream.Msg) uint64 {
	md, err := jm.Metadata()
	if err != nil {
		return 0
	}
	return md.Sequence.Stream
}

// moreComing reports whether more messages are about to follow jm: the
// server has messages not yet delivered after it, or jm is a redelivery,
// which usually comes with the other messages of its batch.
func moreComing(jm jetstream.Msg) bool {
	md, err := jm.Metadata()
	return err == nil && (md.NumPending > 0 || md.NumDelivered > 1)
}

// handleBatch hands jms to h until every message is acknowledged or ctx
// ends (see events.BatchHandler); it returns the messages left then.
func (b *Bus) handleBatch(ctx context.Context, log *slog.Logger, jms []jetstream.Msg, h events.BatchHandler, o events.ConsumeOptions) []jetstream.Msg {
	ms := make([]events.Msg, len(jms))
	for i, jm := range jms {
		ms[i] = b.toMsg(jm)
	}
	for len(jms) > 0 {
		stopExtending := extendWhile(log, jms, o.AckWait)
		n, err := h(ctx, ms)
		stopExtending()
		if err == nil && n <= 0 {
			n = len(ms)
		}
		n = min(max(n, 0), len(ms))
		ack(ctx, log, jms[:n])
		jms, ms = jms[n:], ms[n:]
		if len(jms) == 0 {
			return nil
		}
		if err == nil {
			continue // the handler took a prefix: hand it the rest now
		}
		delay := events.RetryDelayOf(err, o.RetryDelay)
		if ctx.Err() != nil {
			return jms // shutting down: the next consumer gets them at once
		}
		log.Warn("batch handler failed; retrying", "subject", ms[0].Subject, "seq", ms[0].Sequence,
			"delivered", ms[0].NumDelivered, "retry_in", delay, "left", len(ms), "err", err)
		if !hold(ctx, log, jms, delay, o.AckWait) {
			return jms
		}
		ms[0].NumDelivered++
	}
	return nil
}

// ack acknowledges jms: all but the last without waiting, the last
// confirmed by the server (the acks of one connection are processed in
// order), so a restarted consumer does not see them again.
func ack(ctx context.Context, log *slog.Logger, jms []jetstream.Msg) {
	if len(jms) == 0 {
		return
	}
	for _, jm := range jms[:len(jms)-1] {
		if err := jm.Ack(); err != nil {
			log.Error("ack", "err", err)
		}
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := jms[len(jms)-1].DoubleAck(actx); err != nil {
		// They come back after AckWait: at-least-once.
		log.Error("ack", "err", err)
	}
}

// extendWhile extends the ack deadline of jms every third of ackWait
// until the returned function is called: a batch may take longer to
// handle than one message, and AckWait is meant to bound how long a
// crashed process holds messages.
func extendWhile(log *slog.Logger, jms []jetstream.Msg, ackWait time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				inProgress(log, jms)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func inProgress(log *slog.Logger, jms []jetstream.Msg) {
	for _, jm := range jms {
		if err := jm.InProgress(); err != nil {
			log.Warn("extend ack deadline", "err", err)
			return
		}
	}
}

// hold keeps jms from being redelivered for d (InProgress every third of
// ackWait) and reports false when ctx ended first.
func hold(ctx context.Context, log *slog.Logger, jms []jetstream.Msg, d, ackWait time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-tick.C:
			inProgress(log, jms)
		}
	}
}

// releaseAll asks for the redelivery of jms at once, in stream order (a plain
// NAK queues them for redelivery in the order received; a NAK with a
// delay, even zero, goes through the server's timers, which do not keep
// it).
func releaseAll(log *slog.Logger, jms []jetstream.Msg) {
	slices.SortFunc(jms, func(a, b jetstream.Msg) int { return cmp.Compare(streamSeq(a), streamSeq(b)) })
	for _, jm := range jms {
		if err := jm.Nak(); err != nil {
			log.Error("nak", "err", err)
		}
	}
}
