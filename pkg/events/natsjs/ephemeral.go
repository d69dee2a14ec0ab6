package natsjs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
)

// ephemeralBuffer bounds the messages an ephemeral consumer pulls ahead.
const ephemeralBuffer = 64

// consumeEphemeral implements Consume with events.WithEphemeral over a
// JetStream ordered consumer: an unacknowledged, in-memory consumer that
// the server deletes after InactiveThreshold without a reader, and that the
// client recreates at the next undelivered stream sequence when it misses
// heartbeats or a message (connection loss, consumer deleted meanwhile).
// On return the consumer is deleted at once.
func (b *Bus) consumeEphemeral(ctx context.Context, name, subjectFilter string, h events.Handler, o events.ConsumeOptions) error {
	if strings.ContainsAny(name, ".*> \t\r\n") {
		return fmt.Errorf("%w: %q", events.ErrInvalidConsumer, name)
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	cfg := jetstream.OrderedConsumerConfig{
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		InactiveThreshold: o.InactiveThreshold,
		NamePrefix:        name + "-" + hex.EncodeToString(suffix[:]),
	}
	if subjectFilter != "" {
		cfg.FilterSubjects = []string{b.wire(subjectFilter)}
	}
	if !o.StartTime.IsZero() {
		t := o.StartTime
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	cons, err := b.js.OrderedConsumer(ctx, b.jsName, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, jetstream.ErrInvalidConsumerName) || errors.Is(err, jetstream.ErrInvalidSubject) {
			return fmt.Errorf("%w: %s: %w", events.ErrInvalidConsumer, name, err)
		}
		return fmt.Errorf("natsjs: ephemeral consumer %s on %s: %w", name, b.jsName, err)
	}
	log := b.log.With("stream", b.jsName, "consumer", cfg.NamePrefix)
	defer b.deleteEphemeral(log, cons)
	it, err := cons.Messages(jetstream.PullMaxMessages(ephemeralBuffer), jetstream.PullExpiry(pullExpiry))
	if err != nil {
		return fmt.Errorf("natsjs: consume %s: %w", name, err)
	}
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := context.AfterFunc(stopCtx, it.Stop)
	defer stopWatch()
	unlink := context.AfterFunc(b.stopCtx, cancel)
	defer unlink()
	defer it.Stop()

	for {
		jm, err := it.Next()
		if stopCtx.Err() != nil {
			if ctx.Err() != nil {
				return nil
			}
			return events.ErrClosed
		}
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) || errors.Is(err, jetstream.ErrConnectionClosed) {
				return fmt.Errorf("natsjs: consume %s: %w", name, err)
			}
			log.Warn("consume", "err", err)
			select {
			case <-stopCtx.Done():
			case <-time.After(transientBackoff):
			}
			continue
		}
		handleInPlace(stopCtx, log, b.toMsg(jm), h, o)
	}
}

// handleInPlace runs h until it succeeds, ctx ends or MaxDeliver attempts
// failed, waiting RetryDelay (or the handler's RetryAfter) between attempts.
func handleInPlace(ctx context.Context, log *slog.Logger, m events.Msg, h events.Handler, o events.ConsumeOptions) {
	for attempt := uint64(1); ; attempt++ {
		m.NumDelivered = attempt
		err := h(ctx, m)
		if err == nil || ctx.Err() != nil {
			return
		}
		if o.MaxDeliver > 0 && attempt >= uint64(o.MaxDeliver) {
			log.Error("handler failed; skipping the message", "subject", m.Subject, "seq", m.Sequence,
				"attempts", attempt, "err", err)
			return
		}
		delay := events.RetryDelayOf(err, o.RetryDelay)
		log.Warn("handler failed; retrying", "subject", m.Subject, "seq", m.Sequence,
			"attempt", attempt, "retry_in", delay, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// deleteEphemeral removes the current server-side consumer of an ordered
// consumer. Failure only leaves it to the server's inactivity cleanup.
func (b *Bus) deleteEphemeral(log *slog.Logger, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	err := b.js.DeleteConsumer(ctx, b.jsName, info.Name)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		log.Warn("delete ephemeral consumer; the server removes it after its inactive threshold", "err", err)
	}
}

// ConsumerNames implements events.ConsumerLister: the names of the
// consumers the server keeps on the bus's stream, durable and ephemeral.
func (b *Bus) ConsumerNames(ctx context.Context) ([]string, error) {
	s, err := b.js.Stream(ctx, b.jsName)
	if err != nil {
		return nil, fmt.Errorf("natsjs: stream %s: %w", b.jsName, err)
	}
	lister := s.ConsumerNames(ctx)
	var names []string
	for n := range lister.Name() {
		names = append(names, n)
	}
	if err := lister.Err(); err != nil {
		return nil, fmt.Errorf("natsjs: list consumers of %s: %w", b.jsName, err)
	}
	return names, nil
}

var _ events.ConsumerLister = (*Bus)(nil)
