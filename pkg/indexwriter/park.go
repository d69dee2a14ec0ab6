package indexwriter

import (
	"context"
	"errors"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
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
// An event is parked when MaxAttempts applies of it failed with an error
// that is not Transient, or when it is delivered more than MaxAttempts
// times without this process having seen the previous delivery end (the
// process crashed or ran past the ack deadline while applying it: a crash
// loop). Transient errors (the search engine unavailable or closed, the
// context ending) never park: the event waits for the engine.
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
// applying it again.
func (p RetryPolicy) ParkUnseen(delivered int) bool {
	return p.MaxAttempts > 0 && delivered > p.MaxAttempts
}

// Transient reports whether err is worth retrying indefinitely.
func Transient(err error) bool {
	return errors.Is(err, search.ErrUnavailable) || errors.Is(err, search.ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Park gives up on the change event in payload. It records the event's
// transaction as the change-tracking version (nothing changes when a newer
// one is recorded already), so read-your-writes waiters for it return
// instead of waiting out their deadline and the recorded version keeps
// meaning "every transaction up to it was applied or parked". The
// transaction's changes are missing from the index until a later event
// rebuilds the same objects (documents are built from the current state)
// or `cms reindex` rebuilds everything. It returns the transaction.
func (ix *Indexer) Park(ctx context.Context, payload []byte) (int64, error) {
	ev, err := changes.Parse(payload)
	if err != nil {
		return 0, err
	}
	if err := ix.EnsureIndexes(ctx); err != nil {
		return ev.Transaction, err
	}
	return ev.Transaction, ix.recordVersion(ctx, ev.Transaction)
}
