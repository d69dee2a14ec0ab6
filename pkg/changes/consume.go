package changes

import (
	"context"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// DefaultRetryDelay is how long a change event whose handling failed waits
// before it is handled again (Consumer.RetryDelay); a handler error made
// with events.RetryAfter chooses its own delay.
const DefaultRetryDelay = time.Second

// Handler is what a consumer does with one well-formed change event ev,
// delivered as m: nil acknowledges it, an error handles it again after the
// retry delay (or the delay given to events.RetryAfter), before any later
// event.
type Handler func(ctx context.Context, ev Event, m events.Msg) error

// Consumer is the loop every consumer of change events shares: it reads
// the events (Subjects) from the bus, parses each, drops a malformed one
// with a log line (it is acknowledged: retrying cannot help) and hands the
// others to the consumer's Handler, retrying a failed one after
// RetryDelay. The consumers (the webhooks' control loop and lanes, the
// change stream, the render and response caches) keep only what they do
// with an event; the indexer, which reads batches with a retry and park
// policy of its own, drops malformed events with Parse.
type Consumer struct {
	// Name names the consumer in its log lines ("render cache").
	Name string
	// Log receives the line of each malformed event (nil: slog.Default()).
	Log *slog.Logger
	// Quiet drops malformed events without a line, for a consumer whose
	// events another consumer of the same process reads and logs (a
	// webhook's lane: the dispatcher's control loop logs them).
	Quiet bool
	// RetryDelay is how long a failed event waits (0: DefaultRetryDelay).
	RetryDelay time.Duration
}

// Parse returns the event of m, or false for a malformed payload, which it
// logs (unless Quiet): the caller acknowledges it.
func (c Consumer) Parse(ctx context.Context, m events.Msg) (Event, bool) {
	ev, err := Parse(m.Data)
	if err == nil {
		return ev, true
	}
	if !c.Quiet {
		log := c.Log
		if log == nil {
			log = slog.Default()
		}
		log.ErrorContext(ctx, c.Name+": dropping malformed change event", "subject", m.Subject, "msgId", m.MsgID,
			"sequence", m.Sequence, "err", err)
	}
	return ev, false
}

// Handler returns the events.Handler of h: Parse, acknowledging malformed
// events, then h.
func (c Consumer) Handler(h Handler) events.Handler {
	return func(ctx context.Context, m events.Msg) error {
		ev, ok := c.Parse(ctx, m)
		if !ok {
			return nil
		}
		return h(ctx, ev, m)
	}
}

// Consume reads every change event through the consumer name of bus with
// h until ctx ends (events.Consumer.Consume), retrying a failed event
// after RetryDelay; opts (start position, ephemeral, in-flight bound…)
// come after the retry delay and may replace it.
func (c Consumer) Consume(ctx context.Context, bus events.Consumer, name string, h Handler, opts ...events.ConsumeOption) error {
	delay := c.RetryDelay
	if delay <= 0 {
		delay = DefaultRetryDelay
	}
	opts = append([]events.ConsumeOption{events.WithRetryDelay(delay)}, opts...)
	return bus.Consume(ctx, name, Subjects, c.Handler(h), opts...)
}
