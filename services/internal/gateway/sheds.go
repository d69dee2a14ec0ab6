package gateway

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReasonOverloaded marks a 503 the server answers on purpose because it
// is overloaded (load shedding: the search query queue, the password
// checks), as opposed to a component that is down. Such an answer is
// expected: it is counted (Sheds) and summed up in one log line per
// interval, never logged per request.
const ReasonOverloaded = "OVERLOADED"

// Overloaded is the status of a shed request: Unavailable (503) with
// Retry-After and ReasonOverloaded.
func Overloaded(ctx context.Context, retryAfter, msg string) error {
	_ = RetryAfter(ctx, retryAfter, codes.Unavailable, msg)
	return WithReason(codes.Unavailable, ReasonOverloaded, msg, nil)
}

// IsOverloaded reports whether st is the status of a shed request.
func IsOverloaded(st *status.Status) bool {
	info := errorInfo(st)
	return st.Code() == codes.Unavailable && info != nil && info.GetReason() == ReasonOverloaded
}

// Sheds counts the requests refused because the server is overloaded, by
// API group, and logs one summary line (WARN) per interval in which some
// were, instead of one line per refusal.
type Sheds struct {
	log      *slog.Logger
	interval time.Duration

	mu     sync.Mutex
	total  map[string]int64
	recent map[string]int64 // since the last summary
}

// NewSheds returns counters starting at 0 for groups; Run logs the
// summaries every interval.
func NewSheds(log *slog.Logger, interval time.Duration, groups ...string) *Sheds {
	s := &Sheds{log: log, interval: interval, total: map[string]int64{}, recent: map[string]int64{}}
	for _, g := range groups {
		s.total[g] = 0
	}
	return s
}

// Add counts one shed request of group.
func (s *Sheds) Add(group string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.total[group]++
	s.recent[group]++
	s.mu.Unlock()
}

// Totals returns the shed requests by group since the start.
func (s *Sheds) Totals() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.total)
}

// Run logs a summary every interval in which requests were shed, and the
// last one when ctx ends.
func (s *Sheds) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.summary()
			return nil
		case <-t.C:
			s.summary()
		}
	}
}

// summary logs the requests shed since the last one, if any.
func (s *Sheds) summary() {
	s.mu.Lock()
	recent := s.recent
	s.recent = map[string]int64{}
	s.mu.Unlock()
	if len(recent) == 0 {
		return
	}
	var n int64
	parts := make([]string, 0, len(recent))
	for _, g := range slices.Sorted(maps.Keys(recent)) {
		n += recent[g]
		parts = append(parts, g+"="+strconv.FormatInt(recent[g], 10))
	}
	s.log.LogAttrs(context.Background(), slog.LevelWarn, "overloaded: requests shed with 503",
		slog.Int64("shed", n), slog.String("groups", strings.Join(parts, ",")), slog.Duration("interval", s.interval))
}
