// Package indexer is the "indexer" target: a JetStream consumer loop that
// feeds change events (subjects cms.changes.>, durable consumer "indexer")
// to pkg/indexing. It is transport only: decoding, ack/nak and logging.
//
// Delivery is at least once and, with the default MaxInFlight of 1, in
// stream order (which the outbox relay keeps equal to commit order). A
// failed Apply is retried (nak with a delay) before any later event, so the
// recorded change-tracking version never skips a transaction; redelivered
// or replayed events are harmless because documents carry external
// versions. A payload that is not a change event is logged and acked:
// retrying it cannot succeed and would block the stream.
package indexer

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Defaults.
const (
	DefaultDurable    = "indexer"
	DefaultSubject    = "cms.changes.>"
	DefaultRetryDelay = time.Second
)

// Options tune a Service; zero values get defaults.
type Options struct {
	// Durable is the JetStream durable consumer name (DefaultDurable).
	Durable string
	// Subject filters the stream (DefaultSubject).
	Subject string
	// RetryDelay before a failed event is redelivered (DefaultRetryDelay).
	RetryDelay time.Duration
	// AckWait bounds one Apply before JetStream redelivers the event
	// (events.DefaultAckWait). Indexing a new branch reads every object it
	// inherits; raise this for large installations.
	AckWait time.Duration
	// Indexing configures the indexer (index prefix, languages …).
	Indexing indexing.Options
}

// Service consumes change events and applies them to the search index.
type Service struct {
	bus  events.Consumer
	ix   *indexing.Indexer
	err  error // from indexing.New, reported by Run
	log  *slog.Logger
	opts Options
	// counters for Stats
	applied, failed, dropped atomic.Int64
	applyNanos               atomic.Int64
}

// Stats are the indexer's counters since start: events applied, failed
// (retried later) and dropped (malformed), and the total time spent
// applying them.
type Stats struct {
	Applied, Failed, Dropped int64
	ApplySeconds             float64
}

// Stats returns the counters; safe to call concurrently with Run.
func (s *Service) Stats() Stats {
	return Stats{Applied: s.applied.Load(), Failed: s.failed.Load(), Dropped: s.dropped.Load(),
		ApplySeconds: float64(s.applyNanos.Load()) / 1e9}
}

// New returns the indexer service. Wire it as a worker of the "indexer"
// target: indexer.New(comps.Events, comps.Store, comps.Search, log).Run.
func New(bus events.Consumer, st store.Reader, eng search.Engine, log *slog.Logger, opts ...Options) *Service {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Durable == "" {
		o.Durable = DefaultDurable
	}
	if o.Subject == "" {
		o.Subject = DefaultSubject
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("worker", "indexer")
	if o.Indexing.Logger == nil {
		o.Indexing.Logger = log
	}
	ix, err := indexing.New(st, eng, o.Indexing)
	return &Service{bus: bus, ix: ix, err: err, log: log, opts: o}
}

// Indexer is the underlying indexer (for WaitForVersion in tests and
// in-process readers); nil when the options were invalid.
func (s *Service) Indexer() *indexing.Indexer { return s.ix }

// Run consumes until ctx ends, then returns nil. It first makes sure the
// indexes exist, retrying while the engine is unreachable; a mapping
// conflict or invalid options end it with an error.
func (s *Service) Run(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 10*time.Second) {
		err := s.ix.EnsureIndexes(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, search.ErrMappingConflict) || errors.Is(err, search.ErrInvalidMapping) {
			return err
		}
		s.log.Warn("indexer: search engine not ready", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
	s.log.Info("indexer consuming", "durable", s.opts.Durable, "subject", s.opts.Subject)
	copts := []events.ConsumeOption{events.WithRetryDelay(s.opts.RetryDelay)}
	if s.opts.AckWait > 0 {
		copts = append(copts, events.WithAckWait(s.opts.AckWait))
	}
	return s.bus.Consume(ctx, s.opts.Durable, s.opts.Subject, s.handle, copts...)
}

// handle applies one message: nil acks it, an error naks it for a retry.
func (s *Service) handle(ctx context.Context, m events.Msg) error {
	start := time.Now()
	res, err := s.ix.ApplyPayload(ctx, m.Data)
	s.applyNanos.Add(int64(time.Since(start)))
	switch {
	case errors.Is(err, indexing.ErrBadEvent):
		s.dropped.Add(1)
		s.log.Error("indexer: dropping malformed event", "subject", m.Subject, "msgId", m.MsgID, "err", err)
		return nil
	case err != nil:
		s.failed.Add(1)
		if ctx.Err() == nil {
			s.log.Warn("indexer: apply failed, will retry", "subject", m.Subject, "msgId", m.MsgID,
				"delivery", m.NumDelivered, "err", err)
		}
		return err
	}
	s.applied.Add(1)
	s.log.Debug("indexer: applied", "subject", m.Subject, "msgId", m.MsgID, "ops", res.Ops,
		"stale", res.Stale, "branches", res.Branches, "took", time.Since(start))
	return nil
}
