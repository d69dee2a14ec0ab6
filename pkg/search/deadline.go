package search

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/component"
)

// WithDeadline bounds every call of e with g's deadline and reports an
// unreachable, refusing or too slow engine, and ErrUnavailable answers
// (Elasticsearch 503), as component.ErrUnavailable. Aliaser and Ping of e
// are kept.
func WithDeadline(e Engine, g component.Guard) Engine {
	prev := g.Unavailable
	g.Unavailable = func(err error) bool {
		return errors.Is(err, ErrUnavailable) || (prev != nil && prev(err))
	}
	d := &deadlineEngine{e: e, g: g}
	if a, ok := e.(Aliaser); ok {
		return &deadlineAliaser{deadlineEngine: d, a: a}
	}
	return d
}

type deadlineEngine struct {
	e Engine
	g component.Guard
}

func (d *deadlineEngine) EnsureIndex(ctx context.Context, index string, m Mapping) error {
	return d.g.Op(ctx, "EnsureIndex", func(ctx context.Context) error { return d.e.EnsureIndex(ctx, index, m) })
}

func (d *deadlineEngine) DeleteIndex(ctx context.Context, index string) error {
	return d.g.Op(ctx, "DeleteIndex", func(ctx context.Context) error { return d.e.DeleteIndex(ctx, index) })
}

func (d *deadlineEngine) Bulk(ctx context.Context, index string, ops []Op) (r BulkResult, err error) {
	err = d.g.Op(ctx, "Bulk", func(ctx context.Context) error { r, err = d.e.Bulk(ctx, index, ops); return err })
	return r, err
}

func (d *deadlineEngine) Get(ctx context.Context, index, id string) (doc Document, err error) {
	err = d.g.Op(ctx, "Get", func(ctx context.Context) error { doc, err = d.e.Get(ctx, index, id); return err })
	return doc, err
}

func (d *deadlineEngine) Search(ctx context.Context, req SearchRequest) (r SearchResult, err error) {
	err = d.g.Op(ctx, "Search", func(ctx context.Context) error { r, err = d.e.Search(ctx, req); return err })
	return r, err
}

func (d *deadlineEngine) Count(ctx context.Context, index string, q Query) (n int64, err error) {
	err = d.g.Op(ctx, "Count", func(ctx context.Context) error { n, err = d.e.Count(ctx, index, q); return err })
	return n, err
}

func (d *deadlineEngine) Refresh(ctx context.Context, index string) error {
	return d.g.Op(ctx, "Refresh", func(ctx context.Context) error { return d.e.Refresh(ctx, index) })
}

func (d *deadlineEngine) Close() error { return d.e.Close() }

// Budget implements Budgeter with the guard's Budget.
func (d *deadlineEngine) Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	return d.g.Budget(ctx)
}

// Budgeter is an engine whose calls have a deadline (WithDeadline): Budget
// derives the context of all the calls of one request, bounded together by
// that deadline (component.Guard.Budget).
type Budgeter interface {
	Budget(ctx context.Context) (context.Context, context.CancelFunc)
}

// Budget is e's Budget for the calls of one request, or ctx as it is when
// e has no deadline.
func Budget(ctx context.Context, e Engine) (context.Context, context.CancelFunc) {
	if b, ok := e.(Budgeter); ok {
		return b.Budget(ctx)
	}
	return ctx, func() {}
}

// Ping is the engine's Ping under the deadline (nil when it has none).
func (d *deadlineEngine) Ping(ctx context.Context) error { return d.g.Ping(ctx, d.e) }

type deadlineAliaser struct {
	*deadlineEngine
	a Aliaser
}

func (d *deadlineAliaser) SwitchAlias(ctx context.Context, alias, index string) (prev string, err error) {
	err = d.g.Op(ctx, "SwitchAlias", func(ctx context.Context) error { prev, err = d.a.SwitchAlias(ctx, alias, index); return err })
	return prev, err
}

func (d *deadlineAliaser) ResolveAlias(ctx context.Context, alias string) (index string, err error) {
	err = d.g.Op(ctx, "ResolveAlias", func(ctx context.Context) error { index, err = d.a.ResolveAlias(ctx, alias); return err })
	return index, err
}
