// Package events defines how change events leave the CMS and how consumers
// read them back: a Publisher that stores each event at most once per MsgID
// (so an outbox relay may republish a row after a crash without duplicating
// it) and a Consumer that reads the stream through durable, explicitly
// acknowledged consumers or, for per-process readers, through ephemeral
// consumers the server forgets when the process goes away (WithEphemeral).
//
// The package holds only the contract. natsjs implements it over NATS
// JetStream, either on an embedded in-process server or on an external one;
// eventstest is the conformance suite both modes must pass.
package events

import (
	"context"
	"errors"
	"time"
)

// Default stream layout used when a StreamConfig leaves fields empty.
const (
	DefaultStreamName = "CMS_CHANGES"
	// DefaultSubject is changes.Subjects (pkg/changes, which builds on
	// this package, checks that they agree).
	DefaultSubject         = "cms.changes.>"
	DefaultDuplicateWindow = 2 * time.Minute
)

// Sentinel errors. Implementations wrap them with %w.
var (
	// ErrInvalidEvent: the event has no subject or the subject is not
	// covered by the stream.
	ErrInvalidEvent = errors.New("events: invalid event")
	// ErrInvalidConsumer: empty durable name or a name the server rejects.
	ErrInvalidConsumer = errors.New("events: invalid consumer")
	// ErrClosed: the bus was closed.
	ErrClosed = errors.New("events: closed")
)

// Event is one change notification to publish.
type Event struct {
	// Subject the event is published on, e.g. changes.Subject(42).
	Subject string
	// MsgID identifies the event for deduplication: events with the same
	// MsgID published within the stream's duplicate window are stored once.
	// Outbox relays use the outbox row id. Empty disables deduplication.
	MsgID string
	// Data is the payload, opaque to this package.
	Data []byte
	// Headers are extra single-valued headers. MsgID is sent as the
	// Nats-Msg-Id header and must not be repeated here.
	Headers map[string]string
}

// Msg is one delivered event.
type Msg struct {
	Subject string
	MsgID   string
	Data    []byte
	Headers map[string]string
	// Sequence is the event's position in the stream (strictly increasing).
	Sequence uint64
	// NumDelivered is 1 on the first delivery, 2 on the first redelivery...
	NumDelivered uint64
	// Published is when the stream stored the event.
	Published time.Time
	// NumPending is how many later messages matching the consumer's
	// filter the server had not yet delivered to it when it delivered
	// this one (the consumer's backlog).
	NumPending uint64
}

// Handler processes one message. Returning nil acknowledges it (it is never
// delivered again to the same durable consumer); returning an error asks for
// a redelivery after the consumer's retry delay (or the delay given to
// RetryAfter).
type Handler func(ctx context.Context, m Msg) error

// BatchHandler processes consecutive messages of one durable consumer, in
// stream order, and returns how many of them, from the first, it handled:
// those are acknowledged. When that is fewer than len(ms), err must say why
// ms[handled] failed: it is handed to the handler again, followed by the
// messages after it, after the consumer's retry delay (or the delay given
// to RetryAfter), with NumDelivered counting its attempts; no later message
// is handled before it. A nil err acknowledges every message.
type BatchHandler func(ctx context.Context, ms []Msg) (handled int, err error)

// Publisher stores events in the stream.
type Publisher interface {
	// Publish returns once the stream has stored the event (or recognised
	// it as a duplicate of an already stored MsgID), so a nil error means
	// the event is durable and the outbox row may be marked sent.
	Publish(ctx context.Context, e Event) error
}

// Consumer reads the stream through durable consumers.
type Consumer interface {
	// Consume creates the durable consumer durable (filtered to
	// subjectFilter, which may use wildcards) if needed and calls h for each
	// message, one at a time, until ctx ends; it then returns nil. A
	// consumer with the same durable name continues where the previous one
	// left off: acknowledged messages are not delivered again. Messages on
	// one subject reach h in publish order; with the default MaxInFlight of
	// 1 that also holds across retries (a failing message is retried before
	// any later one is delivered). With WithEphemeral the consumer is this
	// call's own instead and durable only names it (see WithEphemeral).
	Consume(ctx context.Context, durable, subjectFilter string, h Handler, opts ...ConsumeOption) error
	// ConsumeBatch is Consume with a handler for up to BatchSize
	// (WithBatchSize) consecutive messages at a time: whatever is pending,
	// without waiting for more when the consumer has caught up. Order holds
	// across retries as with MaxInFlight 1 (see BatchHandler); MaxInFlight
	// is the batch size. WithEphemeral is not supported
	// (ErrInvalidConsumer).
	ConsumeBatch(ctx context.Context, durable, subjectFilter string, h BatchHandler, opts ...ConsumeOption) error
}

// ConsumerLister is implemented by buses that can list the consumers the
// server keeps on their stream (for operators and tests: ephemeral
// consumers must disappear with their process).
type ConsumerLister interface {
	ConsumerNames(ctx context.Context) ([]string, error)
}

// ConsumerDeleter is implemented by buses that can delete a durable
// consumer (its position is forgotten; a later Consume with the same name
// starts afresh). Deleting a consumer that does not exist is no error.
type ConsumerDeleter interface {
	DeleteConsumer(ctx context.Context, durable string) error
}

// Bus is a Publisher and Consumer on one stream.
type Bus interface {
	Publisher
	Consumer
	// Close stops running consumers, drains the connection and, for an
	// embedded server, shuts the server down. Further calls return ErrClosed.
	Close() error
}

// StreamConfig names the stream and the subjects it captures.
type StreamConfig struct {
	Name            string        // default DefaultStreamName
	Subjects        []string      // default [DefaultSubject]
	DuplicateWindow time.Duration // default DefaultDuplicateWindow
	Replicas        int           // default 1
	MaxAge          time.Duration // 0: keep forever
	// Namespace, when set, isolates installations (or test runs) sharing
	// one server: the server's stream is Namespace+"_"+Name and stores
	// every subject under Namespace+"."; publishers, consumer filters and
	// delivered messages keep using the plain subjects, and consumer names
	// are per stream. Letters, digits, - and _ only.
	Namespace string
}

// WithDefaults returns c with empty fields set to the defaults.
func (c StreamConfig) WithDefaults() StreamConfig {
	if c.Name == "" {
		c.Name = DefaultStreamName
	}
	if len(c.Subjects) == 0 {
		c.Subjects = []string{DefaultSubject}
	}
	if c.DuplicateWindow <= 0 {
		c.DuplicateWindow = DefaultDuplicateWindow
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	return c
}
