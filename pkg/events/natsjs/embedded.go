package natsjs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
)

// readyTimeout bounds how long the embedded server may take to start
// (JetStream recovers its streams from disk before it is ready).
const readyTimeout = 30 * time.Second

// EmbeddedConfig configures NewEmbedded.
type EmbeddedConfig struct {
	// Dir is the data directory; JetStream keeps its files in Dir/jetstream.
	// Required.
	Dir string
	// Logger receives the server's and the connection's log; nil discards.
	Logger *slog.Logger
	// Stream is the stream to create or update; empty fields get defaults.
	Stream events.StreamConfig
	// MaxMemory bounds JetStream's memory storage (streams and consumers
	// kept in memory, not on disk) in bytes; 0 leaves the server's default
	// (three quarters of the machine's memory).
	MaxMemory int64
	// Listen optionally also serves NATS clients over TCP ("127.0.0.1:4222",
	// port 0 picks one). Empty: no socket at all, in-process clients only.
	Listen string
}

// NewEmbedded starts a JetStream-enabled nats-server in this process, with
// file storage that syncs every write (SyncAlways) so a crash loses no
// acknowledged event, and connects to it in-process. Close shuts it down.
func NewEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Bus, error) {
	if cfg.Dir == "" {
		return nil, errors.New("natsjs: embedded: Dir is required")
	}
	b, nopts := newBus(cfg.Logger, cfg.Stream, "cms-embedded")
	sopts := &server.Options{
		ServerName: "cms-embedded",
		JetStream:  true,
		StoreDir:   filepath.Join(cfg.Dir, "jetstream"),
		SyncAlways: true,
		NoSigs:     true,
		DontListen: cfg.Listen == "",
	}
	if cfg.MaxMemory > 0 {
		sopts.JetStreamMaxMemory = cfg.MaxMemory
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsjs: embedded: listen %q: %w", cfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("natsjs: embedded: listen %q: %w", cfg.Listen, err)
		}
		if p == 0 {
			p = server.RANDOM_PORT
		}
		sopts.Host, sopts.Port = host, p
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("natsjs: embedded: %w", err)
	}
	srv.SetLogger(serverLogger{b.log.With("component", "nats-server")}, false, false)
	srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		return nil, errors.New("natsjs: embedded: server not ready in time")
	}
	b.srv = srv
	b.log.Info("embedded NATS JetStream server ready", "storeDir", sopts.StoreDir, "listen", b.ClientURL())
	nc, err := nats.Connect("", append(nopts, nats.InProcessServer(srv))...)
	if err != nil {
		srv.Shutdown()
		return nil, fmt.Errorf("natsjs: embedded: connect: %w", err)
	}
	if err := b.start(ctx, nc); err != nil {
		nc.Close()
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, err
	}
	b.releaseDeadDeliveries(ctx)
	return b, nil
}

// releaseDeadDeliveries makes what the previous process left unacknowledged
// deliverable at once. The server has just started in this process, so a
// delivery its stored consumer state still records as pending went to a
// process that ended without acking or nak'ing it (SIGKILL, OOM kill, power
// loss; a clean stop nak's what it holds). JetStream would redeliver it
// only after AckWait (30s by default), and with one message in flight (the
// indexer) nothing else is delivered meanwhile: Index and Delivery would
// stand still for that long after every crash. Each durable consumer with
// pending deliveries is reset to its ack floor instead, so its next
// consumer starts with the first unacknowledged message. That is at least
// once, as before: a message acknowledged above the floor (several in
// flight) comes again. Failing to reset only costs the wait; it is logged.
func (b *Bus) releaseDeadDeliveries(ctx context.Context) {
	st, err := b.js.Stream(ctx, b.jsName)
	if err != nil {
		b.log.Warn("natsjs: embedded: release unacknowledged deliveries", "stream", b.jsName, "err", err)
		return
	}
	l := st.ListConsumers(ctx)
	var reset []*jetstream.ConsumerInfo
	for info := range l.Info() {
		if info.Config.Durable != "" && info.NumAckPending > 0 {
			reset = append(reset, info)
		}
	}
	if err := l.Err(); err != nil {
		b.log.Warn("natsjs: embedded: list consumers", "stream", b.jsName, "err", err)
	}
	for _, info := range reset {
		if _, err := st.ResetConsumer(ctx, info.Name); err != nil {
			b.log.Warn("natsjs: embedded: reset consumer", "consumer", info.Name, "err", err)
			continue
		}
		b.log.Info("natsjs: embedded: redelivering what the previous process left unacknowledged",
			"consumer", info.Name, "pending", info.NumAckPending, "from_seq", info.AckFloor.Stream+1)
	}
}

// ClientURL returns the TCP URL of an embedded server started with Listen,
// or "" otherwise.
func (b *Bus) ClientURL() string {
	if b.srv == nil || b.srv.Addr() == nil {
		return ""
	}
	return b.srv.ClientURL()
}

// serverLogger adapts slog to the nats-server Logger interface. Notices
// (the startup banner of some 25 lines, among others) are logged at debug:
// NewEmbedded logs the one line that matters at info. Fatal messages are
// logged as errors: the server must not exit the process.
type serverLogger struct{ l *slog.Logger }

func (s serverLogger) Noticef(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s serverLogger) Warnf(format string, v ...any)   { s.l.Warn(fmt.Sprintf(format, v...)) }
func (s serverLogger) Fatalf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s serverLogger) Errorf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s serverLogger) Debugf(format string, v ...any)  { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s serverLogger) Tracef(format string, v ...any)  { s.l.Debug(fmt.Sprintf(format, v...)) }
