// Package natsjs implements events.Bus over NATS JetStream.
//
// One type, Bus, serves both deployment modes: Connect dials an external NATS
// server (distributed mode) and NewEmbedded starts a nats-server inside the
// process with JetStream on local disk and connects to it without a socket
// (embedded mode). Either way the stream is created or updated idempotently
// on start with file storage and a duplicate window, so the Nats-Msg-Id
// header deduplicates republished outbox rows.
//
// Durable consumers are pull consumers with explicit acks (consume.go,
// and batch.go for ConsumeBatch);
// ephemeral ones (events.WithEphemeral) are JetStream ordered consumers
// (ephemeral.go). A StreamConfig.Namespace maps the stream and all its
// subjects under a prefix on the server, so installations or test runs can
// share one NATS server without seeing each other's events or consumers.
//
// The connection and JetStream context are exposed (Conn, JetStream) so other
// components, such as the blob object store, can share them.
package natsjs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
)

// drainTimeout bounds Close: how long the connection may take to flush.
const drainTimeout = 10 * time.Second

// Options configure Connect.
type Options struct {
	// Stream is the stream to create or update; empty fields get defaults.
	Stream events.StreamConfig
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Name is the client connection name shown by the server.
	Name string
	// NATSOptions are passed to nats.Connect (credentials, TLS...).
	NATSOptions []nats.Option
}

// Bus is an events.Bus on a JetStream stream.
type Bus struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream events.StreamConfig
	jsName string // the JetStream stream: stream.Name, namespaced
	log    *slog.Logger
	srv    *server.Server // nil unless embedded
	closed chan struct{}  // closed when the connection is closed

	mu        sync.Mutex
	isClosing bool
	stopAll   context.CancelFunc // cancels running Consume loops
	stopCtx   context.Context
	consumers sync.WaitGroup
}

var _ events.Bus = (*Bus)(nil)

// Connect dials the NATS server at url and makes sure the stream exists.
func Connect(ctx context.Context, url string, opts Options) (*Bus, error) {
	b, nopts := newBus(opts.Logger, opts.Stream, opts.Name)
	nc, err := nats.Connect(url, append(append([]nats.Option{nats.MaxReconnects(-1)}, opts.NATSOptions...), nopts...)...)
	if err != nil {
		return nil, fmt.Errorf("natsjs: connect %s: %w", url, err)
	}
	if err := b.start(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return b, nil
}

func newBus(log *slog.Logger, stream events.StreamConfig, name string) (*Bus, []nats.Option) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if name == "" {
		name = "cms"
	}
	b := &Bus{stream: stream.WithDefaults(), log: log, closed: make(chan struct{})}
	b.jsName = b.stream.Name
	if ns := b.stream.Namespace; ns != "" {
		b.jsName = ns + "_" + b.stream.Name
	}
	b.stopCtx, b.stopAll = context.WithCancel(context.Background())
	opts := []nats.Option{
		nats.Name(name),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "url", nc.ConnectedUrl()) }),
	}
	return b, opts
}

func (b *Bus) start(ctx context.Context, nc *nats.Conn) error {
	if ns := b.stream.Namespace; ns != "" && !validNamespace(ns) {
		return fmt.Errorf("natsjs: namespace %q: want letters, digits, - and _ only", ns)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("natsjs: jetstream: %w", err)
	}
	b.nc, b.js = nc, js
	return b.ensureStream(ctx)
}

// ensureStream creates the stream or updates it to the configured subjects,
// duplicate window and age; it is safe to run on every start.
func (b *Bus) ensureStream(ctx context.Context) error {
	subjects := make([]string, len(b.stream.Subjects))
	for i, s := range b.stream.Subjects {
		subjects[i] = b.wire(s)
	}
	cfg := jetstream.StreamConfig{
		Name:       b.jsName,
		Subjects:   subjects,
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		Duplicates: b.stream.DuplicateWindow,
		Replicas:   b.stream.Replicas,
		MaxAge:     b.stream.MaxAge,
	}
	if _, err := b.js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("natsjs: create stream %s: %w", cfg.Name, err)
	}
	return nil
}

// Conn returns the underlying connection, for components sharing it.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream context, for components sharing it.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Stream returns the effective stream configuration.
func (b *Bus) Stream() events.StreamConfig { return b.stream }

// JetStreamName is the name of the stream on the server: Stream().Name,
// prefixed with the namespace and "_" when there is one.
func (b *Bus) JetStreamName() string { return b.jsName }

// wire maps a subject (or filter) of the events API to the server's: under
// the namespace, when there is one.
func (b *Bus) wire(subject string) string {
	if b.stream.Namespace == "" || subject == "" {
		return subject
	}
	return b.stream.Namespace + "." + subject
}

// unwire is the inverse of wire for delivered subjects.
func (b *Bus) unwire(subject string) string {
	if b.stream.Namespace == "" {
		return subject
	}
	return strings.TrimPrefix(subject, b.stream.Namespace+".")
}

func validNamespace(ns string) bool {
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Server returns the embedded server, or nil when connected to an external one.
func (b *Bus) Server() *server.Server { return b.srv }

// Publish implements events.Publisher. The subject must be covered by the
// stream's subjects (checked locally, ErrInvalidEvent), so an event can never
// silently go to no stream or to a different one.
func (b *Bus) Publish(ctx context.Context, e events.Event) error {
	if b.closing() {
		return events.ErrClosed
	}
	if !b.covers(e.Subject) {
		return fmt.Errorf("%w: subject %q is not in stream %s %v", events.ErrInvalidEvent, e.Subject, b.stream.Name, b.stream.Subjects)
	}
	msg := nats.NewMsg(b.wire(e.Subject))
	msg.Data = e.Data
	for k, v := range e.Headers {
		if strings.EqualFold(k, jetstream.MsgIDHeader) {
			return fmt.Errorf("%w: header %s must be given as MsgID", events.ErrInvalidEvent, k)
		}
		msg.Header.Set(k, v)
	}
	// A producer span of the caller's trace, whose context the message
	// headers carry (replacing a traceparent the caller put there), so the
	// consumers' spans join the trace under it. Without a span in ctx, the
	// trace context the caller put in the headers is the parent.
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = tracing.Extract(ctx, e.Headers)
	}
	ctx, span := tracing.Start(ctx, "nats publish "+e.Subject, trace.SpanKindProducer)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("messaging.system", "nats"),
			attribute.String("messaging.destination.name", e.Subject), attribute.String("messaging.message.id", e.MsgID))
	}
	var tc map[string]string
	if span.SpanContext().IsValid() { // no trace to carry: leave the caller's headers as they are
		tc = map[string]string{}
		tracing.Inject(ctx, tc)
	}
	for k, v := range tc {
		for old := range msg.Header { // NATS header names are case-sensitive
			if strings.EqualFold(old, k) {
				delete(msg.Header, old)
			}
		}
		msg.Header.Set(k, v)
	}
	err := b.publishMsg(ctx, e, msg)
	tracing.End(span, err)
	return err
}

func (b *Bus) publishMsg(ctx context.Context, e events.Event, msg *nats.Msg) error {
	popts := []jetstream.PublishOpt{jetstream.WithExpectStream(b.jsName)}
	if e.MsgID != "" {
		popts = append(popts, jetstream.WithMsgID(e.MsgID))
	}
	if _, err := b.js.PublishMsg(ctx, msg, popts...); err != nil {
		if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrConnectionClosed) {
			return fmt.Errorf("natsjs: publish %s: %w", e.Subject, events.ErrClosed)
		}
		return fmt.Errorf("natsjs: publish %s: %w", e.Subject, err)
	}
	return nil
}

func (b *Bus) covers(subject string) bool {
	if subject == "" || strings.ContainsAny(subject, " \t\r\n*>") {
		return false
	}
	for _, f := range b.stream.Subjects {
		if subjectMatches(f, subject) {
			return true
		}
	}
	return false
}

// subjectMatches reports whether the literal subject matches filter, where
// "*" matches one token and a trailing ">" one or more.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	if slices.Contains(st, "") {
		return false
	}
	for i, f := range ft {
		if f == ">" {
			return len(st) > i
		}
		if i >= len(st) {
			return false
		}
		if f != "*" && f != st[i] {
			return false
		}
	}
	return len(ft) == len(st)
}

func (b *Bus) closing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.isClosing
}

// Close stops running Consume calls (they return events.ErrClosed), drains
// the connection so published acks and message acks are flushed, and shuts
// an embedded server down.
func (b *Bus) Close() error {
	b.mu.Lock()
	if b.isClosing {
		b.mu.Unlock()
		return events.ErrClosed
	}
	b.isClosing = true
	b.mu.Unlock()

	b.stopAll()
	b.consumers.Wait()
	var err error
	if derr := b.nc.Drain(); derr != nil && !errors.Is(derr, nats.ErrConnectionClosed) {
		err = fmt.Errorf("natsjs: drain: %w", derr)
	}
	select {
	case <-b.closed:
	case <-time.After(drainTimeout):
		b.nc.Close()
		err = errors.Join(err, errors.New("natsjs: drain timed out"))
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
	return err
}
