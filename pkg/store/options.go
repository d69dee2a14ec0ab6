package store

import (
	"log/slog"
	"time"
)

// Options are the settings shared by all implementations. Build them with
// NewOptions from With… functions; the zero Option list gives DefaultOptions.
type Options struct {
	Logger *slog.Logger
	// Clock supplies transaction times when TxMeta.Time is zero.
	Clock func() time.Time
	// OutboxLease is how long a claimed outbox event stays invisible to
	// other relays before it may be claimed again.
	OutboxLease time.Duration
	// Migrate applies pending schema migrations when the store opens.
	Migrate bool
}

// Option changes Options.
type Option func(*Options)

// DefaultOptions returns a discarding logger, time.Now, a 30s lease and auto-migrate.
func DefaultOptions() Options {
	return Options{
		Logger:      slog.New(slog.DiscardHandler),
		Clock:       time.Now,
		OutboxLease: 30 * time.Second,
		Migrate:     true,
	}
}

// NewOptions applies opts to DefaultOptions.
func NewOptions(opts ...Option) Options {
	o := DefaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithLogger sets the logger (nil keeps the discarding default).
func WithLogger(l *slog.Logger) Option {
	return func(o *Options) {
		if l != nil {
			o.Logger = l
		}
	}
}

// WithClock sets the clock used for transaction times.
func WithClock(now func() time.Time) Option {
	return func(o *Options) {
		if now != nil {
			o.Clock = now
		}
	}
}

// WithOutboxLease sets the outbox claim lease (values <= 0 are ignored).
func WithOutboxLease(d time.Duration) Option {
	return func(o *Options) {
		if d > 0 {
			o.OutboxLease = d
		}
	}
}

// WithMigrate turns applying migrations at open on or off (default on).
func WithMigrate(on bool) Option {
	return func(o *Options) { o.Migrate = on }
}
