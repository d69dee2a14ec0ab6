package events

import "time"

// Consume defaults.
const (
	DefaultRetryDelay  = time.Second
	DefaultAckWait     = 30 * time.Second
	DefaultMaxInFlight = 1
)

// ConsumeOptions tune a durable consumer. Build them with ConsumeOption
// functions; NewConsumeOptions applies the defaults.
type ConsumeOptions struct {
	// RetryDelay is how long a message whose handler failed waits before
	// it is redelivered.
	RetryDelay time.Duration
	// AckWait is how long the server waits for an ack before redelivering
	// (a crashed consumer's messages come back after it).
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one message; 0 or less is unlimited.
	// A message that reaches the bound is skipped by this consumer (it
	// stays in the stream) and the server emits a max-deliveries advisory.
	MaxDeliver int
	// MaxInFlight bounds unacknowledged messages. 1 gives strict order
	// even across retries at the cost of throughput.
	MaxInFlight int
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

// NewConsumeOptions applies opts over the defaults.
func NewConsumeOptions(opts ...ConsumeOption) ConsumeOptions {
	o := ConsumeOptions{
		RetryDelay:  DefaultRetryDelay,
		AckWait:     DefaultAckWait,
		MaxInFlight: DefaultMaxInFlight,
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
	return o
}
