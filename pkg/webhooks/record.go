package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// RecordSettings shape the attempt log (documented defaults in
// docs/webhooks.md).
type RecordSettings struct {
	// Keep is how many attempts are kept per webhook (default 1000).
	Keep int
	// MaxAge is how long an attempt is kept (default 7 days).
	MaxAge time.Duration
	// PruneEvery is the interval of the pruning passes (default 1m); one
	// pass deletes at most pruneBudget rows, the next one continues.
	PruneEvery time.Duration
	// Timeout bounds one append or prune call, and writing what is still
	// queued when the dispatcher stops (default 10s).
	Timeout time.Duration
}

// Defaults of RecordSettings.
const (
	DefaultKeepAttempts   = 1000
	DefaultAttemptsMaxAge = 7 * 24 * time.Hour
)

func (s RecordSettings) withDefaults() RecordSettings {
	if s.Keep <= 0 {
		s.Keep = DefaultKeepAttempts
	}
	if s.MaxAge <= 0 {
		s.MaxAge = DefaultAttemptsMaxAge
	}
	if s.PruneEvery <= 0 {
		s.PruneEvery = time.Minute
	}
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	return s
}

const (
	// recordBuffer is how many attempts wait for the store; beyond it an
	// attempt's record is dropped (and counted in a log line), never the
	// delivery.
	recordBuffer = 4096
	// recordBatch is the most attempts one append writes.
	recordBatch = 200
	// recordLinger is how long the recorder collects attempts after the
	// first before appending them (fewer, larger appends while events
	// flow; an attempt is readable at most this much later).
	recordLinger = 50 * time.Millisecond
	// pruneBudget is the most rows one pruning pass deletes.
	pruneBudget = 10000
)

// recorder writes attempts to the store's attempt log in the background,
// batched, so a slow or failing store neither blocks nor loses a delivery:
// a failed append is logged and its records dropped.
type recorder struct {
	st       store.WebhookLog
	settings RecordSettings
	log      *slog.Logger
	ch       chan store.WebhookAttempt
	dropped  atomic.Int64

	mu      sync.Mutex
	touched map[int64]bool // webhooks with attempts since the last prune
}

func newRecorder(st store.WebhookLog, s RecordSettings, log *slog.Logger) *recorder {
	return &recorder{st: st, settings: s.withDefaults(), log: log,
		ch: make(chan store.WebhookAttempt, recordBuffer), touched: map[int64]bool{}}
}

// record queues a without waiting.
func (r *recorder) record(a store.WebhookAttempt) {
	select {
	case r.ch <- a:
	default:
		if r.dropped.Add(1) == 1 {
			r.log.Warn("webhooks: attempt log buffer full, dropping attempt records", "buffer", recordBuffer)
		}
	}
}

// run appends queued attempts and prunes until ctx ends, then writes what
// is still queued within settings.Timeout.
func (r *recorder) run(ctx context.Context) {
	tick := time.NewTicker(r.settings.PruneEvery)
	defer tick.Stop()
	// An append started before ctx ends is not cut short by it (its
	// records would be lost); its own timeout bounds it.
	bg := context.WithoutCancel(ctx)
	batch := make([]store.WebhookAttempt, 0, recordBatch)
	for {
		if ctx.Err() != nil {
			// Once stopped, all that is queued shares one timeout.
			flush, cancel := context.WithTimeout(bg, r.settings.Timeout)
			defer cancel()
			for {
				batch = r.drain(batch[:0])
				if len(batch) == 0 {
					return
				}
				r.append(flush, batch)
			}
		}
		select {
		case <-ctx.Done():
		case a := <-r.ch:
			r.append(bg, r.collect(ctx, append(batch[:0], a)))
		case <-tick.C:
			r.prune(ctx)
		}
	}
}

// collect adds attempts to batch until it holds recordBatch, recordLinger
// has passed or ctx ends.
func (r *recorder) collect(ctx context.Context, batch []store.WebhookAttempt) []store.WebhookAttempt {
	linger := time.NewTimer(recordLinger)
	defer linger.Stop()
	for len(batch) < recordBatch {
		select {
		case a := <-r.ch:
			batch = append(batch, a)
		case <-linger.C:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// drain adds queued attempts to batch, up to recordBatch, without waiting.
func (r *recorder) drain(batch []store.WebhookAttempt) []store.WebhookAttempt {
	for len(batch) < recordBatch {
		select {
		case a := <-r.ch:
			batch = append(batch, a)
		default:
			return batch
		}
	}
	return batch
}

// append writes batch within settings.Timeout (and ctx); a failure is
// logged and the batch dropped.
func (r *recorder) append(ctx context.Context, batch []store.WebhookAttempt) {
	ctx, cancel := context.WithTimeout(ctx, r.settings.Timeout)
	defer cancel()
	if err := r.st.AppendWebhookAttempts(ctx, batch); err != nil {
		r.log.Warn("webhooks: attempts not recorded", "attempts", len(batch), "err", err)
		return
	}
	r.mu.Lock()
	for _, a := range batch {
		r.touched[a.WebHook] = true
	}
	r.mu.Unlock()
	if n := r.dropped.Swap(0); n > 0 {
		r.log.Warn("webhooks: attempt records dropped while the buffer was full", "dropped", n)
	}
}

// prune deletes attempts older than MaxAge and, for the webhooks with
// attempts since the last pass, those beyond Keep; a pass that used its
// whole budget keeps the webhooks for the next one.
func (r *recorder) prune(ctx context.Context) {
	r.mu.Lock()
	hooks := make([]int64, 0, len(r.touched))
	for h := range r.touched {
		hooks = append(hooks, h)
	}
	r.touched = map[int64]bool{}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.settings.Timeout)
	defer cancel()
	n, err := r.st.PruneWebhookAttempts(ctx, store.WebhookPrune{Before: time.Now().Add(-r.settings.MaxAge),
		WebHooks: hooks, Keep: r.settings.Keep, Limit: pruneBudget})
	if err != nil || n >= pruneBudget {
		if err != nil && !errors.Is(err, context.Canceled) {
			r.log.Warn("webhooks: pruning the attempt log failed", "err", err)
		}
		r.mu.Lock()
		for _, h := range hooks {
			r.touched[h] = true
		}
		r.mu.Unlock()
	}
}

// attemptRecord is the log row of attempt number n of delivery id of ev
// to hook; gaveUp marks the failed attempt after which the dispatcher
// gives the delivery up.
func attemptRecord(hook int64, id string, ev changes.Event, n int, a Attempt, gaveUp bool) store.WebhookAttempt {
	outcome := store.WebhookFailed
	switch {
	case a.OK():
		outcome = store.WebhookAccepted
	case gaveUp:
		outcome = store.WebhookGaveUp
	case a.Refused:
		outcome = store.WebhookRefusedAddress
	}
	return store.WebhookAttempt{WebHook: hook, Delivery: truncate(id, store.MaxWebhookDeliveryBytes),
		Transaction: ev.Transaction, Branch: ev.Branch, Kind: truncate(ev.Kind, store.MaxWebhookKindBytes),
		Attempt: max(n, 1), Time: a.At, Duration: max(a.Duration, 0), Status: max(a.Status, 0),
		Error: truncate(a.Err, store.MaxWebhookErrorBytes), Outcome: outcome}
}

// truncate makes s storable text of at most n bytes: invalid UTF-8 and
// NUL characters (a receiver's status line may carry them; PostgreSQL
// refuses both) are replaced, and the cut falls on a character boundary.
func truncate(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
