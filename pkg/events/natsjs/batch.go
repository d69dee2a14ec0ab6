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

// heldWait bounds the wait for the next message of a batch otherwise: one
// the client has already pulled is returned at once.
const heldWait = time.Millisecond

// ConsumeBatch implements events.Consumer with the durable pull consumer of
// Consume, allowing BatchSize unacknowledged messages. A batch is the
// first message the iterator returns plus those that follow while the
// batch has room: messages the client has already pulled, and, while the
// server reports more pending for the consumer (Msg.NumPending), those
// still to come; a consumer that has caught up hands over what it holds
// after waiting at most heldWait. Acknowledgements of a batch are sent together and the
// last is confirmed by the server before the next batch is gathered.
// Messages left after a handler failure stay with this call: their ack
// deadline is extended (InProgress) until the retry delay has passed, so
// no later message can overtake them; the same happens while the handler
// runs, so AckWait bounds how long a crashed process holds messages rather
// than how long a batch may take. When ctx ends, the messages not handled
// are nak'ed without delay, in stream order, once the iterator has
// drained. Stream order holds across a crash too: messages a previous
// consumer left unacknowledged come back after AckWait, and no newer
// message is handed over before them (gate).
func (b *Bus) ConsumeBatch(ctx context.Context, durable, subjectFilter string, h events.BatchHandler, opts ...events.ConsumeOption) error {
	if durable == "" || h == nil {
		return fmt.Errorf("%w: durable name and handler are required", events.ErrInvalidConsumer)
	}
	o := events.NewConsumeOptions(opts...)
	if o.Ephemeral {
		return fmt.Errorf("%w: ConsumeBatch does not support ephemeral consumers", events.ErrInvalidConsumer)
	}
	if !b.startConsumer() {
		return events.ErrClosed
	}
	defer b.consumers.Done()

	cons, err := b.durable(ctx, durable, subjectFilter, o, o.BatchSize)
	if cons == nil {
		return err
	}
	// Messages a previous consumer (a crashed process) was handed and did
	// not acknowledge are redelivered only after AckWait, while newer
	// ones are delivered at once: they must not overtake them (see gate).
	g, err := newGate(ctx, cons, o.AckWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("natsjs: consumer %s: %w", durable, err)
	}
	it, stopCtx, stop, err := b.messages(ctx, cons, durable, o.BatchSize)
	if err != nil {
		return err
	}
	defer stop()

	log := b.log.With("stream", b.jsName, "consumer", durable)
	// Messages held when ctx ends are released once the iterator has
	// drained: released earlier, they would come back to it.
	var held []jetstream.Msg
	defer func() { releaseAll(log, slices.Concat(held, g.early, g.later)) }()
	batch := make([]jetstream.Msg, 0, o.BatchSize)
	for {
		var jm jetstream.Msg
		var err error
		if g.active() {
			// Wake up to check the gate and extend the held messages.
			jm, err = it.Next(jetstream.NextMaxWait(g.poll))
			if errors.Is(err, nats.ErrTimeout) {
				if released := g.check(stopCtx, log); len(released) > 0 && stopCtx.Err() == nil {
					held = append(held, b.handleBatch(stopCtx, log, released, h, o)...)
				}
				continue
			}
		} else {
			jm, err = it.Next()
		}
		if err != nil {
			if stop, err := b.iteratorError(stopCtx, ctx, log, durable, err); stop {
				return err
			}
			continue
		}
		batch = append(batch[:0], jm)
		for len(batch) < o.BatchSize && stopCtx.Err() == nil {
			// Messages the client already holds (pulled ahead, up to
			// BatchSize) report nothing pending at the server: take them
			// too, waiting only briefly for them.
			wait := heldWait
			if moreComing(batch[len(batch)-1]) {
				wait = gatherWait
			}
			jm, err := it.Next(jetstream.NextMaxWait(wait))
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
		if g.active() {
			batch = g.filter(batch)
			if len(batch) > 0 {
				held = append(held, b.handleBatch(stopCtx, log, batch, h, o)...)
			}
			if released := g.check(stopCtx, log); len(released) > 0 && stopCtx.Err() == nil {
				held = append(held, b.handleBatch(stopCtx, log, released, h, o)...)
			}
			continue
		}
		held = append(held, b.handleBatch(stopCtx, log, batch, h, o)...)
	}
}

// gate keeps stream order across a crash. A consumer started while
// messages handed to a previous one are unacknowledged (NumAckPending)
// gets them back only after AckWait, in no particular order, but newer
// messages at once (up to MaxAckPending, the batch size): handled first,
// they would overtake the older ones, and a handler recording its progress
// (the indexer's version) would record it past changes not applied yet.
// So the redelivered messages (at or below the last stream sequence
// delivered before this consumer started) are collected until all of
// them are here and handed over in stream order, and the newer ones are
// held back (their ack deadline extended) until the consumer's ack floor
// has reached that sequence. Should some never come back (acknowledged
// by a previous process still stopping, or removed by the stream's
// limits), the gate opens after three AckWaits without one.
type gate struct {
	cons     jetstream.Consumer
	upTo     uint64 // 0: open
	owed     int    // redeliveries still to collect before handing them over
	early    []jetstream.Msg
	later    []jetstream.Msg
	ackWait  time.Duration
	poll     time.Duration
	giveUp   time.Time
	extended time.Time
}

func newGate(ctx context.Context, cons jetstream.Consumer, ackWait time.Duration) (*gate, error) {
	if ackWait <= 0 {
		ackWait = events.DefaultAckWait
	}
	g := &gate{cons: cons, ackWait: ackWait, poll: min(extendEvery(ackWait)/2, time.Second)}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.NumAckPending > 0 && info.Delivered.Stream > info.AckFloor.Stream {
		g.upTo = info.Delivered.Stream
		g.owed = info.NumAckPending
		g.giveUp = time.Now().Add(3 * ackWait)
		g.extended = time.Now()
	}
	return g, nil
}

func (g *gate) active() bool { return g.upTo > 0 }

// filter takes batch (in stream order) and returns what may be handed
// over now: the redeliveries once all are here, in stream order.
func (g *gate) filter(batch []jetstream.Msg) []jetstream.Msg {
	for _, jm := range batch {
		if streamSeq(jm) > g.upTo {
			g.later = append(g.later, jm)
			continue
		}
		g.giveUp = time.Now().Add(3 * g.ackWait)
		if g.owed == 0 {
			g.early = append(g.early, jm) // a duplicate: pass it on
			continue
		}
		if !slices.ContainsFunc(g.early, func(o jetstream.Msg) bool { return streamSeq(o) == streamSeq(jm) }) {
			g.owed--
		}
		g.early = append(g.early, jm)
	}
	if g.owed > 0 {
		return nil
	}
	return takeSorted(&g.early)
}

// check opens the gate when every message up to it is acknowledged (or
// the wait is given up) and returns the messages held back, in stream
// order; while closed, it extends their ack deadline.
func (g *gate) check(ctx context.Context, log *slog.Logger) []jetstream.Msg {
	open := time.Now().After(g.giveUp)
	if !open && g.owed == 0 && len(g.early) == 0 {
		info, err := g.cons.Info(ctx)
		if err != nil {
			log.Warn("consumer info", "err", err)
		} else {
			open = info.AckFloor.Stream >= g.upTo
		}
	}
	if !open {
		if time.Since(g.extended) >= extendEvery(g.ackWait) {
			inProgress(log, g.early)
			inProgress(log, g.later)
			g.extended = time.Now()
		}
		return nil
	}
	log.Debug("messages of a previous consumer handled: handing over newer ones", "up_to", g.upTo,
		"missing", g.owed, "held", len(g.later))
	g.upTo, g.owed = 0, 0
	g.early = append(g.early, g.later...)
	g.later = nil
	return takeSorted(&g.early)
}

// takeSorted empties *jms and returns its messages in stream order, each
// once (a message redelivered while held is there twice: its last
// delivery is kept).
func takeSorted(jms *[]jetstream.Msg) []jetstream.Msg {
	ms := *jms
	*jms = nil
	slices.SortStableFunc(ms, func(a, b jetstream.Msg) int { return cmp.Compare(streamSeq(a), streamSeq(b)) })
	out := ms[:0]
	for i, jm := range ms {
		if i+1 < len(ms) && streamSeq(ms[i+1]) == streamSeq(jm) {
			continue
		}
		out = append(out, jm)
	}
	return out
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

// extendEvery is how often the ack deadline of the messages a consumer
// works on or holds is extended (InProgress): a quarter of AckWait, so
// the process may stall for three quarters of it (a GC pause, a starved
// CPU) before the server takes them for lost.
func extendEvery(ackWait time.Duration) time.Duration {
	return max(ackWait/4, 5*time.Millisecond)
}

// extendWhile extends the ack deadline of jms every extendEvery(ackWait)
// until the returned function is called: a batch may take longer to
// handle than one message, and AckWait is meant to bound how long a
// crashed process holds messages.
func extendWhile(log *slog.Logger, jms []jetstream.Msg, ackWait time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(extendEvery(ackWait))
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

// hold keeps jms from being redelivered for d (InProgress every
// extendEvery(ackWait)) and reports false when ctx ended first.
func hold(ctx context.Context, log *slog.Logger, jms []jetstream.Msg, d, ackWait time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(extendEvery(ackWait))
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
