package indexwriter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Defaults of RetryPolicy.
const (
	DefaultMaxAttempts   = 5
	DefaultRetryDelay    = time.Second
	DefaultMaxRetryDelay = 10 * time.Second
)

// RetryPolicy decides how a change event that fails to apply is retried
// and when it is parked (given up) so that later events proceed.
//
// Parking is only for an event that fails deterministically on a healthy
// engine: it is parked when MaxAttempts applies of it failed with an error
// that is not Transient, or when it is delivered more than MaxAttempts
// times without this process having seen the previous delivery end and a
// crash probe proves a crash loop: the caller records one (StartCrashProbe)
// before it applies such a delivery while the engine answers and ends it
// (EndCrashProbe) once the handling ends, so a probe still open at the
// next delivery means the process crashed or ran past the ack deadline
// while applying it. Deliveries that crashed while the engine was away (an
// outage during a crash loop) open no probe and park nothing. Transient errors (a component unreachable,
// refusing, slower than its deadline or closed, the context ending) never
// count: the event waits for the component, however long it is away.
type RetryPolicy struct {
	// MaxAttempts before parking (DefaultMaxAttempts); < 0 = never park.
	MaxAttempts int
	// RetryDelay before the second attempt, doubled for every further one
	// up to MaxRetryDelay (DefaultRetryDelay, DefaultMaxRetryDelay).
	RetryDelay, MaxRetryDelay time.Duration
}

// WithDefaults fills zero fields.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.RetryDelay <= 0 {
		p.RetryDelay = DefaultRetryDelay
	}
	if p.MaxRetryDelay <= 0 {
		p.MaxRetryDelay = max(DefaultMaxRetryDelay, p.RetryDelay)
	}
	return p
}

// Backoff is the delay after the attempt-th failed attempt (1-based).
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	d := p.RetryDelay
	for i := 1; i < attempt && d < p.MaxRetryDelay; i++ {
		d *= 2
	}
	return min(d, p.MaxRetryDelay)
}

// ParkAfterFailure reports whether an event whose failures-th apply failed
// with err is parked.
func (p RetryPolicy) ParkAfterFailure(failures int, err error) bool {
	return p.MaxAttempts > 0 && failures >= p.MaxAttempts && !Transient(err)
}

// ParkUnseen reports whether an event delivered for the delivered-th time,
// whose previous delivery this process did not see end, is parked without
// applying it again (the caller checks first that the engine answers).
func (p RetryPolicy) ParkUnseen(delivered int) bool {
	return p.MaxAttempts > 0 && delivered > p.MaxAttempts
}

// crashProbeID is the StateIndex document of the crash probe of the event
// at stream sequence seq.
func crashProbeID(seq uint64) string { return "crash-probe-" + strconv.FormatUint(seq, 10) }

// CrashProbe reports whether a crash probe of the event at stream
// sequence seq is open: an apply of it started (StartCrashProbe) and its
// handling never ended (EndCrashProbe).
func (ix *Indexer) CrashProbe(ctx context.Context, seq uint64) (bool, error) {
	_, err := ix.eng.Get(ctx, ix.state, crashProbeID(seq))
	switch {
	case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("indexwriter: read crash probe: %w", err)
	}
	return true, nil
}

// StartCrashProbe records durably, beside the change-tracking version,
// that an apply of the event at stream sequence seq starts while the
// engine answers (RetryPolicy).
func (ix *Indexer) StartCrashProbe(ctx context.Context, seq uint64) error {
	if _, err := ix.eng.Bulk(ctx, ix.state, []search.Op{search.Upsert(search.Document{
		ID: crashProbeID(seq), Version: parkedVersion(), Fields: map[string]any{}})}); err != nil {
		return fmt.Errorf("indexwriter: record crash probe: %w", err)
	}
	return nil
}

// EndCrashProbe removes the crash probe of the event at stream sequence
// seq: its handling ended.
func (ix *Indexer) EndCrashProbe(ctx context.Context, seq uint64) error {
	if _, err := ix.eng.Bulk(ctx, ix.state, []search.Op{search.Delete(crashProbeID(seq), parkedVersion())}); err != nil {
		return fmt.Errorf("indexwriter: end crash probe: %w", err)
	}
	return nil
}

// Transient reports whether err is worth retrying indefinitely: a
// component (search engine, store) unavailable as pkg/component's
// deadline wrappers report it, the engine's own ErrUnavailable or
// ErrClosed, or the context ending.
func Transient(err error) bool {
	return errors.Is(err, component.ErrUnavailable) || errors.Is(err, search.ErrUnavailable) ||
		errors.Is(err, search.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Park gives up on a change event: it adds it to the durable parked list
// (indexdoc.ParkedIndex, refreshed) and only then records its transaction
// as the change-tracking version, so that the version keeps meaning
// "every transaction up to it was applied or parked" and a reader that
// sees the version also sees the parked entry: read-your-writes for a
// version that includes it fails with indexdoc.ErrParked instead of
// counting it as visible. Payload, Transaction is filled from the payload
// when it is 0. RetryParked (or `cms indexer retry`) applies it again.
func (ix *Indexer) Park(ctx context.Context, p indexdoc.ParkedEvent) (int64, error) {
	ev, err := changes.Parse(p.Payload)
	if err != nil {
		return 0, err
	}
	p.Transaction = ev.Transaction
	if p.At.IsZero() {
		p.At = time.Now()
	}
	if err := ix.EnsureIndexes(ctx); err != nil {
		return ev.Transaction, err
	}
	if err := ix.writeParked(ctx, search.Upsert(p.Document(parkedVersion()))); err != nil {
		return ev.Transaction, err
	}
	return ev.Transaction, ix.recordVersion(ctx, ev.Transaction)
}

// parkedVersion versions writes of the parked list: later than any
// earlier write, including the tombstone of an entry retried before.
func parkedVersion() int64 { return time.Now().UnixNano() }

func (ix *Indexer) writeParked(ctx context.Context, op search.Op) error {
	if _, err := ix.eng.Bulk(ctx, ix.parked, []search.Op{op}); err != nil {
		return fmt.Errorf("indexwriter: parked list: %w", err)
	}
	if err := ix.eng.Refresh(ctx, ix.parked); err != nil {
		return fmt.Errorf("indexwriter: parked list: %w", err)
	}
	return nil
}

// Parked lists the parked events, oldest transaction first (at most
// indexdoc.MaxParkedList), and how many there are.
func (ix *Indexer) Parked(ctx context.Context) ([]indexdoc.ParkedEvent, int64, error) {
	if err := ix.EnsureIndexes(ctx); err != nil {
		return nil, 0, err
	}
	return ix.tracking.Parked(ctx, 0, 0)
}

// RetryResult is what RetryParked did.
type RetryResult struct {
	// Applied are the parked events applied now (removed from the list).
	Applied []indexdoc.ParkedEvent
	// Failed are those that failed again (still parked), with the error
	// in their Err.
	Failed []indexdoc.ParkedEvent
}

// RetryParked applies the parked events again, oldest first (only those
// of transaction tx when tx > 0), and removes each one that applies from
// the parked list. Documents are built from the store's current state, so
// a late apply writes what is current (or nothing, where a later event
// already did). It stops at the first Transient error: the component is
// away and the rest would fail the same way.
func (ix *Indexer) RetryParked(ctx context.Context, tx int64) (RetryResult, error) {
	var res RetryResult
	list, _, err := ix.Parked(ctx)
	if err != nil {
		return res, err
	}
	for _, p := range list {
		if tx > 0 && p.Transaction != tx {
			continue
		}
		_, err := ix.ApplyPayload(ctx, p.Payload)
		if err != nil && !errors.Is(err, changes.ErrBadEvent) {
			if Transient(err) {
				return res, err
			}
			p.Err = err.Error()
			res.Failed = append(res.Failed, p)
			continue
		}
		if err := ix.writeParked(ctx, search.Delete(indexdoc.ParkedID(p.Transaction, p.Sequence), parkedVersion())); err != nil {
			return res, err
		}
		ix.wakeWaiters()
		res.Applied = append(res.Applied, p)
		ix.log.Info("retried parked change event", "tx", p.Transaction, "seq", p.Sequence)
	}
	return res, nil
}

// clearParked removes the parked events up to version from the list: a
// full rebuild at version includes their changes.
func (ix *Indexer) clearParked(ctx context.Context, version int64) error {
	for {
		list, total, err := ix.tracking.Parked(ctx, version, 0)
		if err != nil || len(list) == 0 {
			return err
		}
		ops := make([]search.Op, len(list))
		for i, p := range list {
			ops[i] = search.Delete(indexdoc.ParkedID(p.Transaction, p.Sequence), parkedVersion())
		}
		if _, err := ix.eng.Bulk(ctx, ix.parked, ops); err != nil {
			return fmt.Errorf("indexwriter: parked list: %w", err)
		}
		if err := ix.eng.Refresh(ctx, ix.parked); err != nil {
			return fmt.Errorf("indexwriter: parked list: %w", err)
		}
		ix.log.Info("rebuild includes parked change events: removed from the parked list", "events", len(list), "upTo", version)
		if int64(len(list)) == total {
			return nil
		}
	}
}
