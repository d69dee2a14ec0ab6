package search

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/component"
)

// ErrOverloaded means a query was refused because QueryLimit.Concurrent queries
// were running and QueryLimit.Queue more were waiting. It comes wrapped in
// a *component.UnavailableError, so the transport answers 503 with
// Retry-After.
var ErrOverloaded = errors.New("search: too many queries running and waiting")

// QueryLimit bounds the queries (Search, Count, Get) an engine runs at
// once, so that overload makes answers slower by a bounded wait, then
// refused quickly, rather than queued for seconds: each query past
// Concurrent waits for a slot (until its context ends: the caller's
// deadline, within WithDeadline the component's), and one arriving while
// Queue others wait is refused at once with ErrOverloaded. Writes (Bulk,
// EnsureIndex …) are not limited.
type QueryLimit struct {
	// Concurrent is the number of queries running at once (<= 0: no
	// limit, WithQueryLimit returns the engine as it is).
	Concurrent int
	// Queue is the number of queries that may wait for a slot (0: none).
	Queue int
}

// WithQueryLimit bounds the queries of e by l. Aliaser and Ping of e are
// kept.
func WithQueryLimit(e Engine, l QueryLimit) Engine {
	if l.Concurrent <= 0 {
		return e
	}
	q := &limitEngine{Engine: e, slots: make(chan struct{}, l.Concurrent), queue: int64(max(l.Queue, 0))}
	if a, ok := e.(Aliaser); ok {
		return &limitAliaser{limitEngine: q, Aliaser: a}
	}
	return q
}

type limitEngine struct {
	Engine
	slots   chan struct{}
	queue   int64
	waiting atomic.Int64
}

type limitAliaser struct {
	*limitEngine
	Aliaser
}

// acquire takes a slot, waiting in the bounded queue if none is free.
func (l *limitEngine) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return &component.UnavailableError{Component: "search", Err: ErrOverloaded}
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limitEngine) release() { <-l.slots }

// Search implements Engine.
func (l *limitEngine) Search(ctx context.Context, req SearchRequest) (SearchResult, error) {
	if err := l.acquire(ctx); err != nil {
		return SearchResult{}, err
	}
	defer l.release()
	return l.Engine.Search(ctx, req)
}

// Count implements Engine.
func (l *limitEngine) Count(ctx context.Context, index string, q Query) (int64, error) {
	if err := l.acquire(ctx); err != nil {
		return 0, err
	}
	defer l.release()
	return l.Engine.Count(ctx, index, q)
}

// Get implements Engine.
func (l *limitEngine) Get(ctx context.Context, index, id string) (Document, error) {
	if err := l.acquire(ctx); err != nil {
		return Document{}, err
	}
	defer l.release()
	return l.Engine.Get(ctx, index, id)
}

// Ping is the engine's Ping (nil when it has none); never queued.
func (l *limitEngine) Ping(ctx context.Context) error {
	if p, ok := l.Engine.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}
