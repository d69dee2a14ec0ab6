package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
)

// DurableName is the durable consumer of the dispatcher.
const DurableName = "webhooks"

// Payload is the JSON body of a delivery.
type Payload struct {
	// ID identifies the delivery: the same event to the same webhook keeps
	// its ID across retries, so receivers drop duplicates by it.
	ID      string        `json:"id"`
	WebHook int64         `json:"webhook"`
	Event   changes.Event `json:"event"`
}

// Config of a Dispatcher.
type Config struct {
	Client ClientSettings
	Retry  RetrySettings
	// Record shapes the attempt log (store.WebhookLog).
	Record RecordSettings
	// OnAttempt, when set, sees every attempt (tests, logs).
	OnAttempt func(hook int64, ev changes.Event, a Attempt)
	Logger    *slog.Logger
}

// Dispatcher consumes the change stream with the durable consumer
// DurableName and delivers each event to the matching webhooks.
//
// Order and durability: the consumer runs with one message in flight, and
// an event is acknowledged only when every matching webhook accepted it or
// gave up on it, so a restart or a receiver outage loses nothing and no
// later event overtakes an earlier one. The price: a failing receiver
// holds back the deliveries of the other webhooks until it recovers or its
// give-up time passes (head-of-line blocking).
type Dispatcher struct {
	st     store.Store
	bus    events.Consumer
	client *Client
	cfg    Config
	rec    *recorder

	mu   sync.Mutex
	defs []Definition
	// done holds, for the event in flight (by stream sequence), the
	// webhooks that accepted it, so a retry does not send it again.
	doneSeq uint64
	done    map[int64]bool
	// tries counts the attempts of the event in flight per webhook (the
	// attempt number of its log records).
	tries map[int64]int
}

// New returns a dispatcher reading definitions from st.
func New(st store.Store, bus events.Consumer, cfg Config) *Dispatcher {
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Dispatcher{st: st, bus: bus, client: NewClient(cfg.Client), cfg: cfg, defs: nil,
		rec: newRecorder(st, cfg.Record, cfg.Logger)}
}

// Run loads the definitions and consumes until ctx ends. Every attempt
// is recorded in the store's attempt log in the background (recorder),
// which is pruned periodically; the records still queued when ctx ends
// are written before Run returns.
func (d *Dispatcher) Run(ctx context.Context) error {
	if err := d.reload(ctx); err != nil {
		return fmt.Errorf("webhooks: load definitions: %w", err)
	}
	// The recorder outlives Consume, so a handler ending with ctx still
	// has its attempts written.
	recCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	recDone := make(chan struct{})
	go func() { defer close(recDone); d.rec.run(recCtx) }()
	defer func() { stop(); <-recDone }()
	return d.bus.Consume(ctx, DurableName, changes.Subjects, d.handle,
		events.WithMaxInFlight(1), events.WithAckWait(d.client.settings.Timeout*4+30*time.Second))
}

func (d *Dispatcher) reload(ctx context.Context) error {
	defs, err := LoadDefinitions(ctx, d.st)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.defs = defs
	d.mu.Unlock()
	return nil
}

func (d *Dispatcher) handle(ctx context.Context, m events.Msg) error {
	ev, err := changes.Parse(m.Data)
	if err != nil {
		d.cfg.Logger.Warn("webhooks: skipping a malformed event", "subject", m.Subject, "err", err)
		return nil
	}
	types, err := content.ChangeTypes(ctx, d.st, ev)
	if err != nil {
		return events.RetryAfter(err, time.Second)
	}
	if ev.Branch == content.BranchDefault && d.touchesDefinitions(ev, types) {
		if err := d.reload(ctx); err != nil {
			return events.RetryAfter(err, time.Second)
		}
	}
	d.mu.Lock()
	defs := d.defs
	if d.doneSeq != m.Sequence {
		d.doneSeq, d.done, d.tries = m.Sequence, map[int64]bool{}, map[int64]int{}
	}
	done, tries := d.done, d.tries
	d.mu.Unlock()

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []Attempt
	now := time.Now()
	for _, def := range defs {
		if !def.Matches(ev, types) || done[def.ID] {
			continue
		}
		// The first attempt in this process continues the stream's count
		// of deliveries of the event (a restart goes on counting).
		if tries[def.ID] == 0 {
			tries[def.ID] = max(int(m.NumDelivered)-1, 0)
		}
		tries[def.ID]++
		try := tries[def.ID]
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := Payload{ID: fmt.Sprintf("%s-%d", m.MsgID, def.ID), WebHook: def.ID, Event: ev}
			body, _ := json.Marshal(p)
			a := d.client.Deliver(ctx, def.URL, def.Secret, body, p.ID, now)
			if d.cfg.OnAttempt != nil {
				d.cfg.OnAttempt(def.ID, ev, a)
			}
			gaveUp := !a.OK() && d.cfg.Retry.GivenUp(m.Published, now)
			d.rec.record(attemptRecord(def.ID, p.ID, ev, try, a, gaveUp))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case a.OK():
				done[def.ID] = true
			case gaveUp:
				done[def.ID] = true
				d.cfg.Logger.Warn("webhooks: giving up", "webhook", def.ID, "event", m.MsgID, "err", a.Err)
			default:
				failed = append(failed, a)
			}
		}()
	}
	wg.Wait()
	if len(failed) == 0 {
		return nil
	}
	var retryAfter time.Duration
	for _, a := range failed {
		retryAfter = max(retryAfter, a.RetryAfter)
	}
	return events.RetryAfter(errors.New(failed[0].Err), d.cfg.Retry.Backoff(int(m.NumDelivered), retryAfter))
}

// touchesDefinitions reports whether ev may change a webhook definition.
func (d *Dispatcher) touchesDefinitions(ev changes.Event, types []int64) bool {
	if slices.Contains(types, content.TypeWebHookDefinition) {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, def := range d.defs {
		if slices.Contains(ev.ObjectIDs, def.ID) {
			return true
		}
	}
	return false
}
