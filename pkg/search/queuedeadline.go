package search

import (
	"context"
	"time"
)

// queueDeadlineKey keys the deadline WithQueueDeadline sets.
type queueDeadlineKey struct{}

// WithQueueDeadline returns ctx in which a query of an engine bounded by
// WithQueryLimit waits for a slot at most until t (and at most the
// limit's MaxWait): all the queries of one read share one wait, so that a
// read that already waited (for a worker of pkg/delivery.ReadPool, for
// an earlier query) waits only for what is left of it, and a read whose
// wait is spent takes a free slot or is refused at once with
// ErrOverloaded. An earlier deadline on ctx is kept.
func WithQueueDeadline(ctx context.Context, t time.Time) context.Context {
	if d, ok := QueueDeadline(ctx); ok && !d.After(t) {
		return ctx
	}
	return context.WithValue(ctx, queueDeadlineKey{}, t)
}

// QueueDeadline returns the deadline WithQueueDeadline set on ctx.
func QueueDeadline(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(queueDeadlineKey{}).(time.Time)
	return t, ok
}
