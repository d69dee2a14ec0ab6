// Package indexer is the "indexer" target: a JetStream consumer loop that
// feeds change events (subjects changes.Subjects, durable consumer "indexer")
// to pkg/indexwriter. It is transport only: decoding, ack/nak and logging.
//
// Events arrive in batches of up to Options.BatchSize (whatever is pending,
// events.Consumer.ConsumeBatch), at least once and in stream order (which
// the outbox relay keeps equal to commit order). A batch is applied with
// indexwriter.ApplyBatch (one pass, one refresh, one version record) and
// acknowledged after it; when that fails its events are applied one by one
// (batch.go), each acknowledged after its Apply. A failed Apply is retried
// before any later event, so the recorded change-tracking version never
// skips a transaction; redelivered or replayed events are harmless because
// documents carry external versions. A payload that is not a change event
// is logged and acked: retrying it cannot succeed and would block the
// stream. Lag reports how far behind the stream the indexer is.
//
// Retries back off exponentially. A component that is unreachable,
// refusing or slower than its deadline (the search engine, the store) is
// never a reason to give up: the event waits for it however long it is
// away, and meanwhile the indexer reports itself not ready (Ready). An
// event that fails deterministically on a healthy engine is parked
// (indexwriter.RetryPolicy: after MaxAttempts failures that are not
// Transient, or after a crash loop that a crash probe proves: an apply
// started while the engine answered never ended) instead of
// blocking every later event: it is logged at ERROR with its stream
// sequence, MsgID and transaction, counted (Stats.Parked, the "parked"
// result of cms_indexer_events_total), added to the durable parked list
// (indexwriter.Indexer.Park: `cms indexer parked` lists it) and
// acknowledged. Read-your-writes for a version that includes a parked
// transaction answers 503 naming it (indexdoc.ErrParked) rather than
// counting it as visible. Parked events are applied again when the
// indexer starts, when a component it waited for has recovered, and on
// `cms indexer retry`; each one that applies leaves the list.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/trace"
)

// Defaults.
const (
	DefaultDurable    = "indexer"
	DefaultSubject    = changes.Subjects
	DefaultRetryDelay = time.Second
)

// Options tune a Service; zero values get defaults.
type Options struct {
	// Durable is the JetStream durable consumer name (DefaultDurable).
	Durable string
	// Subject filters the stream (DefaultSubject).
	Subject string
	// RetryDelay before a failed event is first redelivered
	// (DefaultRetryDelay); it doubles per attempt up to Retry.MaxRetryDelay.
	RetryDelay time.Duration
	// Retry bounds the attempts before an event is parked; its RetryDelay
	// is RetryDelay above (indexwriter.RetryPolicy for the defaults).
	Retry indexwriter.RetryPolicy
	// AckWait is how long events delivered to a crashed indexer wait
	// before JetStream redelivers them (events.DefaultAckWait); while a
	// batch is applied its deadline is extended (events.ConsumeBatch).
	AckWait time.Duration
	// BatchSize bounds the events applied in one pass
	// (events.DefaultBatchSize; 1 applies one event at a time).
	BatchSize int
	// Indexing configures the indexer (index prefix, languages …).
	Indexing indexwriter.Options
}

// Service consumes change events and applies them to the search index.
type Service struct {
	bus   events.Consumer
	ix    *indexwriter.Indexer
	err   error // from indexwriter.New, reported by Run
	log   *slog.Logger
	opts  Options
	retry indexwriter.RetryPolicy
	// counters for Stats
	applied, failed, dropped, parked atomic.Int64
	batches, applyNanos              atomic.Int64
	// parkedNow: the events in the durable parked list when last read
	// (refreshParked), -1 before the first read.
	parkedNow atomic.Int64
	lag       lagState
	// retrying: a retry of the parked list runs (retryParked).
	retrying atomic.Bool
	retries  sync.WaitGroup

	mu         sync.Mutex
	tries      map[uint64]tries // by stream sequence, until acked
	parkedList []Parked         // the last maxParkedList parked events
	// oneByOneUntil: events up to this stream sequence are applied one
	// at a time (their batch failed, or was redelivered).
	oneByOneUntil uint64
	// waitingFor is the Transient error of the last apply while the
	// indexer waits for a component; nil once an apply succeeded.
	waitingFor error
}

// tries is what this process saw of one event's deliveries.
type tries struct {
	failed   int  // failed applies seen here (the backoff exponent)
	failures int  // of them, those that were not Transient
	seen     int  // the last delivery whose handling ended here
	probe    bool // a crash probe of it is open (indexwriter.RetryPolicy)
}

// maxParkedList bounds Parked.
const maxParkedList = 100

// Parked is one parked event.
type Parked struct {
	Subject     string
	MsgID       string
	Sequence    uint64 // in the change stream
	Transaction int64
	Deliveries  uint64
	Err         string
	At          time.Time
}

// Stats are the indexer's counters since start: events applied, failed
// (retried later), dropped (malformed) and parked (given up after
// failures), the batches applied in one pass, and the total time spent
// applying; ParkedNow is how many events the durable parked list holds
// now (read at start, after each park and retry, and every
// ParkedRefresh; -1 before the first read).
type Stats struct {
	Applied, Failed, Dropped, Parked int64
	Batches                          int64
	ApplySeconds                     float64
	ParkedNow                        int64
}

// Stats returns the counters; safe to call concurrently with Run.
func (s *Service) Stats() Stats {
	return Stats{Applied: s.applied.Load(), Failed: s.failed.Load(), Dropped: s.dropped.Load(),
		Parked: s.parked.Load(), Batches: s.batches.Load(), ApplySeconds: float64(s.applyNanos.Load()) / 1e9,
		ParkedNow: s.parkedNow.Load()}
}

// Parked lists the last events parked since start, oldest first.
func (s *Service) Parked() []Parked {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Parked(nil), s.parkedList...)
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
	if o.BatchSize <= 0 {
		o.BatchSize = events.DefaultBatchSize
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("worker", "indexer")
	if o.Indexing.Logger == nil {
		o.Indexing.Logger = log
	}
	if o.Retry.RetryDelay <= 0 {
		o.Retry.RetryDelay = o.RetryDelay
	}
	ix, err := indexwriter.New(st, eng, o.Indexing)
	s := &Service{bus: bus, ix: ix, err: err, log: log, opts: o, retry: o.Retry.WithDefaults(),
		tries: map[uint64]tries{}}
	s.parkedNow.Store(-1)
	return s
}

// Indexer is the underlying indexer (for WaitForVersion in tests and
// in-process readers); nil when the options were invalid.
func (s *Service) Indexer() *indexwriter.Indexer { return s.ix }

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
	defer s.retries.Wait()
	s.retryParked(ctx, "start")
	s.retries.Go(func() { s.watchParked(ctx) })
	s.log.Info("indexer consuming", "durable", s.opts.Durable, "subject", s.opts.Subject, "batch", s.opts.BatchSize)
	copts := []events.ConsumeOption{events.WithRetryDelay(s.opts.RetryDelay), events.WithBatchSize(s.opts.BatchSize)}
	if s.opts.AckWait > 0 {
		copts = append(copts, events.WithAckWait(s.opts.AckWait))
	}
	return s.bus.ConsumeBatch(ctx, s.opts.Durable, s.opts.Subject, s.handleBatch, copts...)
}

// handle applies one message: nil acks it, an error asks for a retry
// after the policy's backoff.
func (s *Service) handle(ctx context.Context, m events.Msg) error {
	delivered := int(m.NumDelivered)
	s.mu.Lock()
	tr := s.tries[m.Sequence]
	s.mu.Unlock()
	if tr.seen != delivered-1 && s.retry.ParkUnseen(delivered) {
		// A crash loop is only one while the engine answers: deliveries
		// that crashed during an outage counted the wait, not crashes.
		// Only a crash probe (an apply started while the engine answered)
		// left open by an earlier delivery proves one.
		if err := s.ix.Ping(ctx); err != nil {
			return s.retryLater(ctx, m, &tr, err, false)
		}
		open, err := s.ix.CrashProbe(ctx, m.Sequence)
		if err != nil {
			return s.retryLater(ctx, m, &tr, err, false)
		}
		if open {
			s.endProbe(ctx, m, &tr)
			return s.park(ctx, m, fmt.Errorf("delivered %d times without the handling ending, and an apply of it started while the search engine answered never ended: the process crashed or exceeded the ack wait while applying it", delivered))
		}
		if err := s.ix.StartCrashProbe(ctx, m.Sequence); err != nil {
			return s.retryLater(ctx, m, &tr, err, false)
		}
		tr.probe = true
	}
	ev, ok := changes.Consumer{Name: "indexer", Log: s.log}.Parse(ctx, m)
	if !ok {
		s.endProbe(ctx, m, &tr)
		s.forget(m.Sequence)
		s.dropped.Add(1)
		return nil
	}
	start := time.Now()
	actx, span := tracing.Start(eventContext(ctx, m), "indexer.apply "+m.Subject, trace.SpanKindConsumer)
	res, err := s.ix.Apply(actx, ev)
	tracing.End(span, err)
	s.applyNanos.Add(int64(time.Since(start)))
	s.endProbe(ctx, m, &tr)
	switch {
	case err != nil:
		s.failed.Add(1)
		if !indexwriter.Transient(err) {
			tr.failures++
		}
		if s.retry.ParkAfterFailure(tr.failures, err) {
			return s.park(ctx, m, err)
		}
		return s.retryLater(ctx, m, &tr, err, true)
	}
	s.forget(m.Sequence)
	s.applied.Add(1)
	s.recovered(ctx)
	s.log.Debug("indexer: applied", "subject", m.Subject, "msgId", m.MsgID, "ops", res.Ops,
		"stale", res.Stale, "branches", res.Branches, "took", time.Since(start))
	return nil
}

// eventContext is ctx under m's trace: ctx itself when its span is of that
// trace already (the batch span), else ctx with m's span as remote parent.
func eventContext(ctx context.Context, m events.Msg) context.Context {
	ectx := tracing.Extract(ctx, m.Headers) // the headers decoded once
	sc := trace.SpanContextFromContext(ectx)
	if cur := trace.SpanContextFromContext(ctx); !sc.IsValid() || (cur.IsValid() && cur.TraceID() == sc.TraceID()) {
		return ctx
	}
	return ectx
}

// probeEndTimeout bounds ending a crash probe, which is done even when
// ctx ended (a stop during the apply is no crash).
const probeEndTimeout = 5 * time.Second

// endProbe ends m's open crash probe; when that fails (the engine went
// away) tr keeps it open and the next handling ends it.
func (s *Service) endProbe(ctx context.Context, m events.Msg, tr *tries) {
	if !tr.probe {
		return
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeEndTimeout)
	defer cancel()
	if err := s.ix.EndCrashProbe(ectx, m.Sequence); err != nil {
		s.log.Warn("indexer: cannot end the crash probe, will retry", "seq", m.Sequence, "err", err)
		return
	}
	tr.probe = false
}

// retryLater records a failed attempt at m (seen: its handling ended here)
// and asks for a retry after the backoff.
func (s *Service) retryLater(ctx context.Context, m events.Msg, tr *tries, err error, seen bool) error {
	tr.failed++
	if seen {
		tr.seen = int(m.NumDelivered)
	}
	s.mu.Lock()
	s.tries[m.Sequence] = *tr
	switch {
	case !indexwriter.Transient(err):
		s.waitingFor = nil // the components answered
	case ctx.Err() == nil:
		s.waitingFor = err
	}
	s.mu.Unlock()
	// Backoff by the failures seen, not by deliveries: redeliveries
	// after lost acks (a NATS restart) are no reason to wait longer.
	delay := s.retry.Backoff(tr.failed)
	if ctx.Err() != nil {
		return events.RetryAfter(err, delay)
	}
	s.log.Warn("indexer: apply failed, will retry", "subject", m.Subject, "msgId", m.MsgID,
		"delivery", m.NumDelivered, "retry_in", delay, "transient", indexwriter.Transient(err), "err", err)
	if indexwriter.Transient(err) {
		delay = s.untilEngineBack(ctx, delay)
	}
	return events.RetryAfter(err, delay)
}

// enginePoll is how often a wait for the engine pings it.
const enginePoll = 250 * time.Millisecond

// untilEngineBack waits, for at most d, while the engine does not answer
// its ping, and returns what is left of d: 0 when the engine answered
// again (the event is retried at once instead of after the rest of its
// backoff), all of d when it answered at once (the failure was another
// component's: the consumer waits d) or when d is too short to poll.
func (s *Service) untilEngineBack(ctx context.Context, d time.Duration) time.Duration {
	deadline := time.Now().Add(d)
	if d <= enginePoll || s.ix.Ping(ctx) == nil {
		return d
	}
	t := time.NewTicker(enginePoll)
	defer t.Stop()
	for time.Until(deadline) > enginePoll {
		select {
		case <-ctx.Done():
			return max(0, time.Until(deadline))
		case <-t.C:
		}
		if s.ix.Ping(ctx) == nil {
			return 0
		}
	}
	return max(0, time.Until(deadline))
}

// Ready reports nil unless the indexer is waiting for a component that
// is unavailable (its last apply failed as Transient).
func (s *Service) Ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waitingFor != nil {
		return fmt.Errorf("indexer waiting for an unavailable component: %w", s.waitingFor)
	}
	return nil
}

// recovered ends a wait for a component (an apply succeeded) and then
// retries the parked events.
func (s *Service) recovered(ctx context.Context) {
	s.mu.Lock()
	was := s.waitingFor
	s.waitingFor = nil
	s.mu.Unlock()
	if was != nil {
		s.log.Info("indexer: component back, applying again", "was", was)
		s.retryParked(ctx, "recovered")
	}
}

// retryParked applies the parked events again in the background (one
// retry at a time; Run waits for it before returning).
func (s *Service) retryParked(ctx context.Context, why string) {
	if !s.retrying.CompareAndSwap(false, true) {
		return
	}
	s.retries.Go(func() {
		defer s.retrying.Store(false)
		res, err := s.ix.RetryParked(ctx, 0)
		s.refreshParked(ctx)
		if len(res.Applied) > 0 || len(res.Failed) > 0 {
			s.log.Info("indexer: retried parked events", "why", why, "applied", len(res.Applied), "still_parked", len(res.Failed))
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("indexer: retrying parked events failed", "why", why, "err", err)
		}
	})
}

// park gives up on m (see the package documentation). When it cannot be
// added to the parked list the event is retried like a failure.
func (s *Service) park(ctx context.Context, m events.Msg, cause error) error {
	p := indexdoc.ParkedEvent{Subject: m.Subject, MsgID: m.MsgID, Sequence: m.Sequence,
		Deliveries: m.NumDelivered, Err: cause.Error(), At: time.Now(), Payload: m.Data}
	tx, err := s.ix.Park(ctx, p)
	if err != nil && !errors.Is(err, changes.ErrBadEvent) {
		s.log.Warn("indexer: cannot park event, will retry", "subject", m.Subject, "msgId", m.MsgID, "err", err)
		return events.RetryAfter(err, s.retry.RetryDelay)
	}
	s.forget(m.Sequence)
	s.parked.Add(1)
	s.refreshParked(ctx)
	p.Transaction = tx
	s.mu.Lock()
	s.waitingFor = nil // the engine answered
	if len(s.parkedList) == maxParkedList {
		s.parkedList = s.parkedList[1:]
	}
	s.parkedList = append(s.parkedList, Parked{Subject: m.Subject, MsgID: m.MsgID, Sequence: m.Sequence,
		Transaction: tx, Deliveries: m.NumDelivered, Err: p.Err, At: p.At})
	s.mu.Unlock()
	s.log.Error("indexer: parked change event: its changes are missing from the index until it is retried (`cms indexer retry`, or automatically when the indexer restarts or a component recovers); read-your-writes including it answers 503",
		"subject", m.Subject, "msgId", m.MsgID, "seq", m.Sequence, "tx", tx, "deliveries", m.NumDelivered, "err", cause)
	return nil
}

// ParkedRefresh is how often the indexer reads the size of the durable
// parked list besides its own parks and retries (another process, such
// as `cms indexer retry`, may change it).
const ParkedRefresh = 15 * time.Second

// refreshParked reads how many events the durable parked list holds
// (Stats.ParkedNow); a failed read keeps the last value.
func (s *Service) refreshParked(ctx context.Context) {
	if _, total, err := s.ix.Parked(ctx); err == nil {
		s.parkedNow.Store(total)
	}
}

// watchParked refreshes Stats.ParkedNow every ParkedRefresh until ctx ends.
func (s *Service) watchParked(ctx context.Context) {
	t := time.NewTicker(ParkedRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refreshParked(ctx)
		}
	}
}

func (s *Service) forget(seq uint64) {
	s.mu.Lock()
	delete(s.tries, seq)
	s.mu.Unlock()
}
