package search

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
)

// ErrOverloaded means a query was refused because all QueryLimit.Concurrent
// slots were taken and it would have waited longer than QueryLimit.MaxWait
// for one (or QueryLimit.Queue others were waiting already). It comes
// wrapped in a *component.UnavailableError, so the transport answers 503
// with Retry-After.
var ErrOverloaded = errors.New("search: too many queries running and waiting")

// QueryLimit bounds the queries (Search, Count, Get) an engine runs at
// once, so that overload makes answers slower by a bounded wait, then
// refused quickly, rather than queued for seconds. A query past
// Concurrent waits for a slot in a queue sized by time, not by a short
// fixed length: it is admitted while its expected wait (the queries ahead
// of it, and itself, times the recent interval between two slots freed
// while queries waited) stays within MaxWait, and refused at once with
// ErrOverloaded beyond it; one admitted waits at most MaxWait (then
// ErrOverloaded) and
// never past its context (the caller's deadline, within WithDeadline the
// component's) nor past the read's queue deadline (WithQueueDeadline: the
// queries of one read share one wait). Queue caps the waiting queries whatever their expected
// wait, a bound on memory. Writes (Bulk, EnsureIndex …) are not limited.
type QueryLimit struct {
	// Concurrent is the number of queries running at once (<= 0: no
	// limit, WithQueryLimit returns the engine as it is).
	Concurrent int
	// Queue is the most queries that may wait for a slot (0: none).
	Queue int
	// MaxWait is the longest a query waits for a slot (0: no bound but
	// Queue and its context).
	MaxWait time.Duration
}

// QueryLimitStats are the counters of a limited engine.
type QueryLimitStats struct {
	// Waiting is the number of queries waiting for a slot now.
	Waiting int64
	// Shed counts the queries refused with ErrOverloaded.
	Shed int64
	// MeanQuery is the recent mean time a query held a slot.
	MeanQuery time.Duration
	// Interval is the recent interval between two slots freed while
	// queries waited: the time a waiting query moves up one place (0
	// until measured).
	Interval time.Duration
}

// QueryLimited is implemented by an engine WithQueryLimit bounds.
type QueryLimited interface {
	QueryLimitStats() QueryLimitStats
}

// WithQueryLimit bounds the queries of e by l. Aliaser and Ping of e are
// kept.
func WithQueryLimit(e Engine, l QueryLimit) Engine {
	if l.Concurrent <= 0 {
		return e
	}
	q := &limitEngine{Engine: e, slots: make(chan struct{}, l.Concurrent), queue: int64(max(l.Queue, 0)),
		maxWait: max(l.MaxWait, 0), start: time.Now()}
	if a, ok := e.(Aliaser); ok {
		return &limitAliaser{limitEngine: q, Aliaser: a}
	}
	return q
}

type limitEngine struct {
	Engine
	slots   chan struct{}
	queue   int64
	maxWait time.Duration
	waiting atomic.Int64
	shed    atomic.Int64
	// mean is the moving average of the time a query holds a slot, in
	// nanoseconds (0 until one ended).
	mean atomic.Int64
	// interval is the moving average of the time between two releases
	// while queries waited, in nanoseconds (0 until measured).
	interval atomic.Int64
	samples  atomic.Int64 // intervals folded into interval
	// last is the time of the last release in nanoseconds since start,
	// its lowest bit set when queries were waiting then.
	last  atomic.Int64
	start time.Time
}

type limitAliaser struct {
	*limitEngine
	Aliaser
}

// meanWeight is the weight of the newest query time in the moving
// average (1/8: a few dozen queries make the mean follow a change).
const meanWeight = 8

// intervalWeight is the weight of the newest interval between releases in
// its moving average, and intervalClamp the most one interval counts as,
// in multiples of the average. A query's wait is the sum of the intervals
// of all the queries ahead of it, so the average follows a change over
// some 64 releases; one stall of the process (the releases of all slots
// delayed at once, by the garbage collector or a machine busy with other
// work) must not predict seconds for the waiters behind it.
const intervalWeight, intervalClamp = 64, 8

// QueryLimitStats implements QueryLimited.
func (l *limitEngine) QueryLimitStats() QueryLimitStats {
	return QueryLimitStats{Waiting: l.waiting.Load(), Shed: l.shed.Load(), MeanQuery: time.Duration(l.mean.Load()),
		Interval: time.Duration(l.interval.Load())}
}

// expectedWait is how long a query that finds ahead queries waiting
// would wait for a slot: one interval between releases for each of them
// and for itself. Before an interval was measured it is estimated from
// the mean query time: on average half a query until the first slot
// frees, then one query per ahead, Concurrent at a time. That estimate
// only holds while the slots are what the queue waits for; when the CPU
// is (an embedded engine, a machine busy with other work), a waiter
// handed a slot waits to be scheduled before its query time starts, and
// the estimate, measured at 200 connections on a loaded 2-core machine,
// was mostly a hundredth to a tenth of the real wait and, after a stall
// left a few slow queries in the mean, above MaxWait for waits of a
// tenth of it: those queries were shed.
func (l *limitEngine) expectedWait(ahead int64) time.Duration {
	if iv := l.interval.Load(); iv > 0 {
		return time.Duration(iv * (ahead + 1))
	}
	return time.Duration(float64(l.mean.Load()) * (float64(ahead) + 0.5) / float64(cap(l.slots)))
}

func (l *limitEngine) overloaded() error {
	l.shed.Add(1)
	return &component.UnavailableError{Component: "search", Err: ErrOverloaded}
}

// acquire takes a slot, waiting in the bounded queue if none is free. It
// returns when the slot was taken, for release.
func (l *limitEngine) acquire(ctx context.Context) (time.Time, error) {
	select {
	case l.slots <- struct{}{}:
		return time.Now(), nil
	default:
	}
	wait, bounded := l.maxWait, l.maxWait > 0
	if d, ok := QueueDeadline(ctx); ok {
		// What is left of the read's wait (WithQueueDeadline).
		if left := time.Until(d); !bounded || left < wait {
			wait, bounded = left, true
		}
	}
	ahead := l.waiting.Add(1) - 1
	defer l.waiting.Add(-1)
	if ahead >= l.queue || (bounded && (wait <= 0 || l.expectedWait(ahead) > wait)) {
		return time.Time{}, l.overloaded()
	}
	var timeout <-chan time.Time
	if bounded {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case l.slots <- struct{}{}:
		return time.Now(), nil
	case <-timeout:
		return time.Time{}, l.overloaded()
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// release frees the slot taken at start and folds the query's time into
// the mean, and the interval since the previous release into its average
// when queries waited at both.
func (l *limitEngine) release(start time.Time) {
	d := int64(time.Since(start))
	if m := l.mean.Load(); m == 0 {
		l.mean.Store(d)
	} else {
		l.mean.Store(m + (d-m)/meanWeight) // a lost concurrent update only delays the average
	}
	waiting := l.waiting.Load() > 0
	<-l.slots
	now := int64(time.Since(l.start)) &^ 1
	mark := now
	if waiting {
		mark |= 1
	}
	prev := l.last.Swap(mark)
	if !waiting || prev&1 == 0 {
		return // the queue did not wait for the slots all the time since
	}
	gap := max(now-prev&^1, 1)
	// The first intervals are averaged as they come, then each weighs
	// 1/intervalWeight; a lost concurrent update only delays the average.
	n := l.samples.Add(1)
	if iv := l.interval.Load(); n == 1 || iv == 0 {
		l.interval.Store(gap)
	} else {
		l.interval.Store(max(iv+(min(gap, intervalClamp*iv)-iv)/min(n, intervalWeight), 1))
	}
}

// Search implements Engine.
func (l *limitEngine) Search(ctx context.Context, req SearchRequest) (SearchResult, error) {
	start, err := l.acquire(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	defer l.release(start)
	return l.Engine.Search(ctx, req)
}

// Count implements Engine.
func (l *limitEngine) Count(ctx context.Context, index string, q Query) (int64, error) {
	start, err := l.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer l.release(start)
	return l.Engine.Count(ctx, index, q)
}

// Get implements Engine.
func (l *limitEngine) Get(ctx context.Context, index, id string) (Document, error) {
	start, err := l.acquire(ctx)
	if err != nil {
		return Document{}, err
	}
	defer l.release(start)
	return l.Engine.Get(ctx, index, id)
}

// Ping is the engine's Ping (nil when it has none); never queued.
func (l *limitEngine) Ping(ctx context.Context) error {
	if p, ok := l.Engine.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}
