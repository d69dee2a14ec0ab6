package webhooks

import (
	"math/rand/v2"
	"time"
)

// RetrySettings shape the retry schedule of a failed delivery (documented
// defaults in docs/webhooks.md).
type RetrySettings struct {
	// Initial is the backoff cap of the first retry (default 1s); it
	// doubles with each attempt up to Max (default 5m).
	Initial, Max time.Duration
	// GiveUpAfter ends retries this long after the first attempt
	// (default 24h); the event is then recorded as given up.
	GiveUpAfter time.Duration
}

func (s RetrySettings) withDefaults() RetrySettings {
	if s.Initial <= 0 {
		s.Initial = time.Second
	}
	if s.Max <= 0 {
		s.Max = 5 * time.Minute
	}
	if s.GiveUpAfter <= 0 {
		s.GiveUpAfter = 24 * time.Hour
	}
	return s
}

// Backoff returns the wait before retry number n (1 = after the first
// failed attempt): exponential with full jitter, a uniform value in
// [0, min(Max, Initial·2^(n-1))). A receiver's Retry-After raises the wait
// to at least that long (still capped by Max).
func (s RetrySettings) Backoff(n int, retryAfter time.Duration) time.Duration {
	s = s.withDefaults()
	ceil := s.Initial
	for i := 1; i < n && ceil < s.Max; i++ {
		ceil *= 2
	}
	ceil = min(ceil, s.Max)
	d := time.Duration(rand.Int64N(int64(ceil)) + 1) //nolint:gosec // jitter, not a secret
	if retryAfter > d {
		d = min(retryAfter, s.Max)
	}
	return d
}

// GivenUp reports whether an event first attempted at first is abandoned
// at now.
func (s RetrySettings) GivenUp(first, now time.Time) bool {
	return now.Sub(first) >= s.withDefaults().GiveUpAfter
}
