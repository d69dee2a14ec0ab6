// Package component bounds every call to an external component (store,
// events, search engine, cache, blobs) with a deadline and classifies its
// failures: a component that refuses connections, resets them or does not
// answer within its deadline is unavailable (ErrUnavailable), which the
// transport answers with 503 and Retry-After instead of 500 or a hang.
//
// The rule lives here once; pkg/search, pkg/cache and pkg/store wrap
// their interfaces with it (search.WithDeadline, cache.WithDeadline …).
package component

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/tracing"
)

// ErrUnavailable means a component cannot answer right now (unreachable,
// refusing, resetting connections or slower than its deadline). Retrying
// later may succeed. Errors carrying it are *UnavailableError.
var ErrUnavailable = errors.New("component unavailable")

// UnavailableError names the component that failed and keeps the cause.
type UnavailableError struct {
	Component string
	Err       error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%s unavailable: %v", e.Component, e.Err)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap keeps the cause reachable (errors.Is(err, context.DeadlineExceeded)).
func (e *UnavailableError) Unwrap() error { return e.Err }

// Guard is the deadline of one component's calls.
type Guard struct {
	// Name names the component in errors ("search", "cache" …).
	Name string
	// Timeout bounds one call; <= 0 means no deadline of its own (the
	// caller's still applies).
	Timeout time.Duration
	// Unavailable, if set, reports component-specific errors that also
	// mean "unavailable" (e.g. Elasticsearch answering 503).
	Unavailable func(error) bool
}

// Context derives the context of one call: ctx with the guard's deadline
// unless ctx already ends sooner.
func (g Guard) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.Timeout <= 0 {
		return ctx, func() {}
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= g.Timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, g.Timeout)
}

// budgetKey marks a context whose deadline is a guard's (Budget), by the
// guard's Name.
type budgetKey struct{ name string }

// Budget derives the context of several calls of the component made for
// one request: ctx with the guard's deadline for all of them together
// (one timer, not one per call; the calls within it take no deadline of
// their own) unless ctx already ends sooner. A call within it that the
// deadline ends is unavailable, as one past its own deadline is: the
// deadline is the component's, not the caller's.
func (g Guard) Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.Timeout <= 0 {
		return ctx, func() {}
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= g.Timeout {
		return ctx, func() {}
	}
	bctx, cancel := context.WithTimeout(ctx, g.Timeout)
	d, _ := bctx.Deadline()
	return context.WithValue(bctx, budgetKey{g.Name}, d), cancel
}

// ownDeadline reports whether ctx ended at the deadline of this guard's
// Budget, not at one of the caller's.
func (g Guard) ownDeadline(ctx context.Context) bool {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false
	}
	b, ok := ctx.Value(budgetKey{g.Name}).(time.Time)
	d, _ := ctx.Deadline()
	return ok && b.Equal(d)
}

// Do runs fn under the guard's deadline and classifies its error.
func (g Guard) Do(ctx context.Context, fn func(context.Context) error) error {
	cctx, cancel := g.Context(ctx)
	defer cancel()
	return g.Classify(ctx, fn(cctx))
}

// Op is Do in a client span named "<component> <op>" (e.g. "search
// Search"), so that a trace shows each call of a component, how long it
// took and how it failed. A call outside a recorded span (tracing off,
// or not sampled) is Do alone: a component call is never a trace's root,
// and the cached read path does not pay for a span nobody records.
func (g Guard) Op(ctx context.Context, op string, fn func(context.Context) error) error {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return g.Do(ctx, fn)
	}
	ctx, span := tracing.Start(ctx, g.Name+" "+op, trace.SpanKindClient)
	err := g.Do(ctx, fn)
	tracing.End(span, err)
	return err
}

// Classify turns err into an *UnavailableError when it means the component
// is down or too slow; other errors (not found, invalid input …) and the
// caller's own cancellation or deadline (ctx done) are returned unchanged.
func (g Guard) Classify(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if ctx.Err() != nil && !g.ownDeadline(ctx) {
		return err // the caller gave up: not the component's fault
	}
	if Unreachable(err) || (g.Unavailable != nil && g.Unavailable(err)) {
		return &UnavailableError{Component: g.Name, Err: err}
	}
	return err
}

// Unreachable reports whether err is a deadline or a transport failure:
// context.DeadlineExceeded, a timeout, a refused, reset or aborted
// connection, or a connection closed mid-answer.
func Unreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// Call is Do for a function with a result.
func Call[T any](ctx context.Context, g Guard, fn func(context.Context) (T, error)) (T, error) {
	var out T
	err := g.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = fn(ctx)
		return err
	})
	return out, err
}

// Ping calls v's Ping(ctx) under the guard's deadline; nil when v has no
// Ping (an embedded component that is always there).
func (g Guard) Ping(ctx context.Context, v any) error {
	p, ok := v.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	return g.Do(ctx, p.Ping)
}
