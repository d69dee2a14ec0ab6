package indexer

import (
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// Lag is how far the indexer is behind the change stream, as of the last
// batch it received.
type Lag struct {
	// Events not yet applied: the consumer's pending count (messages the
	// server has not delivered yet, events.Msg.NumPending) plus the
	// delivered ones not yet acknowledged.
	Events int64
	// Seconds is the age of the oldest event not yet applied (from the
	// time the stream stored it); 0 when caught up. Between batches of a
	// backlog it is measured from the last applied event, a slight
	// overestimate until the next batch arrives.
	Seconds float64
}

// lagState tracks Lag.
type lagState struct {
	mu      sync.Mutex
	pending uint64    // NumPending of the last message received
	inHand  int       // received, not yet acknowledged
	oldest  time.Time // Published of the oldest event not applied; zero when none
}

// Lag returns how far the indexer is behind; safe to call concurrently
// with Run.
func (s *Service) Lag() Lag {
	l := &s.lag
	l.mu.Lock()
	defer l.mu.Unlock()
	out := Lag{Events: int64(l.pending) + int64(l.inHand)}
	if !l.oldest.IsZero() {
		out.Seconds = max(0, time.Since(l.oldest).Seconds())
	}
	return out
}

// observe records a batch as received.
func (s *Service) observe(ms []events.Msg) {
	l := &s.lag
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = ms[len(ms)-1].NumPending
	l.inHand = len(ms)
	l.oldest = ms[0].Published
}

// caughtUpTo records done, a prefix of batch, as applied.
func (s *Service) caughtUpTo(done, batch []events.Msg) {
	l := &s.lag
	l.mu.Lock()
	defer l.mu.Unlock()
	rest := batch[len(done):]
	l.inHand = len(rest)
	switch {
	case len(rest) > 0:
		l.oldest = rest[0].Published
	case l.pending > 0:
		l.oldest = done[len(done)-1].Published
	default:
		l.oldest = time.Time{}
	}
}
