package events

import (
	"errors"
	"time"
)

// Consume defaults.
const (
	DefaultRetryDelay = time.Second
	// DefaultAckWait is how long the server waits for the ack of a
	// delivered message before redelivering it: how long the messages a
	// killed consumer held stay invisible to the next one. It does not
	// bound how long a handler may take: while a handler runs, the
	// deadline of its messages is extended every quarter of AckWait
	// (InProgress), so only a dead process (or one frozen for three
	// quarters of it) lets it pass. 30 s made a restarted indexer wait
	// 23-29 s for a killed one's batch; 2 s brings it back within 2 s of
	// the kill, so the indexer's backlog is searchable within 5 s.
	DefaultAckWait     = 2 * time.Second
	DefaultMaxInFlight = 1
	// DefaultBatchSize bounds the messages ConsumeBatch hands over at once.
	DefaultBatchSize = 256
	// DefaultInactiveThreshold is how long the server keeps an ephemeral
	// consumer whose process went away without removing it.
	DefaultInactiveThreshold = time.Minute
)

// ConsumeOptions tune a durable consumer. Build them with ConsumeOption
// functions; NewConsumeOptions applies the defaults.
type ConsumeOptions struct {
	// RetryDelay is how long a message whose handler failed waits before
	// it is redelivered.
	RetryDelay time.Duration
	// AckWait is how long the server waits for an ack before redelivering
	// (a crashed consumer's messages come back after it); a durable
	// consumer extends the deadline of the messages its handler is
	// working on every quarter of it, so a handler may take longer.
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one message; 0 or less is unlimited.
	// A message that reaches the bound is skipped by this consumer (it
	// stays in the stream) and the server emits a max-deliveries advisory.
	MaxDeliver int
	// MaxInFlight bounds unacknowledged messages. 1 gives strict order
	// even across retries at the cost of throughput.
	MaxInFlight int
	// BatchSize bounds the messages ConsumeBatch hands to its handler at
	// once (DefaultBatchSize); Consume ignores it.
	BatchSize int
	// StartSequence, when not 0, is the first stream sequence a durable
	// consumer created by this call delivers (0: the whole stream). A
	// durable consumer that already exists keeps its position.
	StartSequence uint64

	// Ephemeral makes the consumer belong to this Consume call only (see
	// WithEphemeral). The fields below apply to ephemeral consumers.
	Ephemeral bool
	// StartTime: the ephemeral consumer first delivers the events stored at
	// or after it. Zero: only events stored after the consumer exists.
	StartTime time.Time
	// InactiveThreshold is how long the server keeps an ephemeral consumer
	// nobody reads (its process crashed or lost the connection) before it
	// deletes it.
	InactiveThreshold time.Duration
}

// ConsumeOption changes ConsumeOptions.
type ConsumeOption func(*ConsumeOptions)

// WithRetryDelay sets ConsumeOptions.RetryDelay.
func WithRetryDelay(d time.Duration) ConsumeOption {
	return func(o *ConsumeOptions) { o.RetryDelay = d }
}

// WithAckWait sets ConsumeOptions.AckWait.
func WithAckWait(d time.Duration) ConsumeOption {
	return func(o *ConsumeOptions) { o.AckWait = d }
}

// WithMaxDeliver sets ConsumeOptions.MaxDeliver.
func WithMaxDeliver(n int) ConsumeOption {
	return func(o *ConsumeOptions) { o.MaxDeliver = n }
}

// WithMaxInFlight sets ConsumeOptions.MaxInFlight.
func WithMaxInFlight(n int) ConsumeOption {
	return func(o *ConsumeOptions) { o.MaxInFlight = n }
}

// WithBatchSize sets ConsumeOptions.BatchSize.
func WithBatchSize(n int) ConsumeOption {
	return func(o *ConsumeOptions) { o.BatchSize = n }
}

// WithStartSequence sets ConsumeOptions.StartSequence.
func WithStartSequence(seq uint64) ConsumeOption {
	return func(o *ConsumeOptions) { o.StartSequence = seq }
}

// WithEphemeral makes Consume use a consumer of its own instead of the
// durable one: per-process readers such as the invalidator of an in-memory
// cache, which need every event in every process but no position across
// restarts. Its semantics:
//
//   - The durable argument of Consume is only a name prefix shown by the
//     server; a random suffix makes the consumer unique, so processes
//     passing the same name each get every event.
//   - It starts with the events stored since StartTime (WithStartTime), or,
//     without one, with the events stored after the consumer was created:
//     events stored between the process start and that moment are not
//     delivered. A reader whose state was empty at process start closes
//     that gap by passing its start time (replays are then harmless when
//     handling is idempotent).
//   - When ctx ends or the bus is closed, Consume deletes the consumer. If
//     the process dies instead, the server deletes it after
//     InactiveThreshold. After a connection loss it is recreated at the
//     next undelivered event, so nothing is skipped while the stream keeps
//     the events.
//   - A handler error retries the same message in this process after
//     RetryDelay, before any later one (NumDelivered counts the attempts
//     of this process); MaxDeliver, if set, bounds the attempts, after
//     which the message is skipped. AckWait and MaxInFlight do not apply.
func WithEphemeral() ConsumeOption {
	return func(o *ConsumeOptions) { o.Ephemeral = true }
}

// WithStartTime sets ConsumeOptions.StartTime (ephemeral consumers only).
func WithStartTime(t time.Time) ConsumeOption {
	return func(o *ConsumeOptions) { o.StartTime = t }
}

// WithInactiveThreshold sets ConsumeOptions.InactiveThreshold.
func WithInactiveThreshold(d time.Duration) ConsumeOption {
	return func(o *ConsumeOptions) { o.InactiveThreshold = d }
}

// NewConsumeOptions applies opts over the defaults.
func NewConsumeOptions(opts ...ConsumeOption) ConsumeOptions {
	o := ConsumeOptions{
		RetryDelay:  DefaultRetryDelay,
		AckWait:     DefaultAckWait,
		MaxInFlight: DefaultMaxInFlight,
		BatchSize:   DefaultBatchSize,

		InactiveThreshold: DefaultInactiveThreshold,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.RetryDelay < 0 {
		o.RetryDelay = 0
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.InactiveThreshold <= 0 {
		o.InactiveThreshold = DefaultInactiveThreshold
	}
	return o
}

// retryAfter is a handler error with its own redelivery delay.
type retryAfter struct {
	err   error
	delay time.Duration
}

func (r retryAfter) Error() string { return r.err.Error() }
func (r retryAfter) Unwrap() error { return r.err }

// RetryAfter wraps a handler error so that the message is redelivered
// after d instead of the consumer's RetryDelay (a handler's own backoff).
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return retryAfter{err: err, delay: d}
}

// RetryDelayOf is the redelivery delay for a handler error: the one given
// to RetryAfter, else def.
func RetryDelayOf(err error, def time.Duration) time.Duration {
	var r retryAfter
	if errors.As(err, &r) && r.delay >= 0 {
		return r.delay
	}
	return def
}
