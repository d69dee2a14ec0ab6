package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
)

// DurableName is the durable consumer of the dispatcher's control loop;
// the lane of webhook id consumes with LaneName(id).
const DurableName = "webhooks"

// DefaultMaxLanes is the default of Config.MaxLanes.
const DefaultMaxLanes = 100

// refreshEvery is how often, at most, the control loop reloads the
// definitions and the lane consumers without an event touching a
// definition: processes sharing the control consumer each see only some
// of its events, so each catches up with the lanes another one started or
// stopped within this time (of the next event).
const refreshEvery = 30 * time.Second

// LaneName is the durable consumer of the delivery lane of webhook id.
func LaneName(id int64) string { return DurableName + "-" + strconv.FormatInt(id, 10) }

// laneID is the webhook of a lane's consumer name (false for any other
// name).
func laneID(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, DurableName+"-")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0 && LaneName(id) == name
}

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
	// MaxLanes bounds the delivery lanes, one per enabled webhook
	// (default DefaultMaxLanes): the enabled webhooks beyond it, by
	// ascending id, are not delivered to (a warning is logged).
	MaxLanes int
	// OnAttempt, when set, sees every attempt (tests, logs).
	OnAttempt func(hook int64, ev changes.Event, a Attempt)
	Logger    *slog.Logger
}

// Dispatcher delivers the change stream to the webhooks, each through a
// lane of its own: a durable consumer (LaneName) holding that webhook's
// position in the stream, one event in flight, acknowledged once the
// webhook accepted it, gave it up or its address was refused. So a slow,
// failing or refused receiver holds back its own deliveries only, each
// webhook gets its events in stream order, and a restart resends to a
// webhook only what it had not acknowledged.
//
// A control loop on the durable consumer DurableName follows the
// definitions: the lane of a webhook created or enabled by the event at
// stream sequence s starts at s; the lane of a webhook deleted or disabled
// stops and its consumer is deleted (its pending deliveries are dropped).
type Dispatcher struct {
	st     store.Store
	bus    events.Consumer
	client *Client
	cfg    Config
	rec    *recorder

	outcomes outcomeCounts

	reloadMu sync.Mutex // serializes reloads: the last one stored is the newest
	mu       sync.Mutex
	defs     map[int64]Definition

	// lanes and overCap belong to Run and the control loop (one goroutine
	// at a time).
	lanes     map[int64]*lane
	lanesCtx  context.Context
	wg        sync.WaitGroup
	overCap   string
	refreshed time.Time
}

// New returns a dispatcher reading definitions from st.
func New(st store.Store, bus events.Consumer, cfg Config) *Dispatcher {
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.MaxLanes <= 0 {
		cfg.MaxLanes = DefaultMaxLanes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Dispatcher{st: st, bus: bus, client: NewClient(cfg.Client), cfg: cfg,
		rec: newRecorder(st, cfg.Record, cfg.Logger), lanes: map[int64]*lane{}}
}

// Run loads the definitions, starts the lanes whose consumers exist and
// runs the control loop until ctx ends; then the lanes stop. Every attempt
// is recorded in the store's attempt log in the background (recorder),
// which is pruned periodically; the records still queued when ctx ends
// are written before Run returns.
func (d *Dispatcher) Run(ctx context.Context) error {
	if err := d.reload(ctx); err != nil {
		return fmt.Errorf("webhooks: load definitions: %w", err)
	}
	// The recorder outlives the lanes, so a handler ending with ctx still
	// has its attempts written.
	recCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	recDone := make(chan struct{})
	go func() { defer close(recDone); d.rec.run(recCtx) }()
	defer func() { stop(); <-recDone }()
	lanesCtx, stopLanes := context.WithCancel(ctx)
	defer func() { stopLanes(); d.wg.Wait() }()
	d.lanesCtx = lanesCtx
	d.refresh(ctx)
	return d.consumer(false).Consume(ctx, d.bus, DurableName, d.control,
		events.WithMaxInFlight(1), events.WithAckWait(d.ackWait()))
}

// ackWait is how long the server waits for a lane's (or the control
// loop's) ack: a few attempt timeouts.
func (d *Dispatcher) ackWait() time.Duration { return d.client.settings.Timeout*4 + 30*time.Second }

// existingLanes returns the webhooks whose lane consumer exists on the
// stream (none when the bus cannot list consumers).
func (d *Dispatcher) existingLanes(ctx context.Context) (map[int64]bool, error) {
	l, ok := d.bus.(events.ConsumerLister)
	if !ok {
		return nil, nil
	}
	names, err := l.ConsumerNames(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, n := range names {
		if id, ok := laneID(n); ok {
			out[id] = true
		}
	}
	return out, nil
}

// refresh starts the lanes of the wanted webhooks whose consumer exists
// and stops the others (see reconcile).
func (d *Dispatcher) refresh(ctx context.Context) {
	d.refreshed = time.Now()
	existing, err := d.existingLanes(ctx)
	if err != nil {
		d.cfg.Logger.Warn("webhooks: listing the lanes failed; they start with the next event", "err", err)
	}
	d.reconcile(ctx, 0, existing)
}

func (d *Dispatcher) reload(ctx context.Context) error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	defs, err := LoadDefinitions(ctx, d.st)
	if err != nil {
		return err
	}
	m := make(map[int64]Definition, len(defs))
	for _, def := range defs {
		m[def.ID] = def
	}
	d.mu.Lock()
	d.defs = m
	d.mu.Unlock()
	return nil
}

// definition returns the current definition of webhook id.
func (d *Dispatcher) definition(id int64) (Definition, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	def, ok := d.defs[id]
	return def, ok
}

// wanted returns the webhooks that get a lane: the enabled ones with a
// URL, by ascending id, at most MaxLanes; and those beyond the bound.
func (d *Dispatcher) wanted() (in, over []int64) {
	d.mu.Lock()
	for id, def := range d.defs {
		if def.Enabled && def.URL != "" {
			in = append(in, id)
		}
	}
	d.mu.Unlock()
	slices.Sort(in)
	if len(in) > d.cfg.MaxLanes {
		in, over = in[:d.cfg.MaxLanes], in[d.cfg.MaxLanes:]
	}
	return in, over
}

// isWanted reports whether webhook id gets a lane.
func (d *Dispatcher) isWanted(id int64) bool {
	in, _ := d.wanted()
	return slices.Contains(in, id)
}

// consumer is the change-event loop of the control loop and, quiet (the
// control loop logs malformed events), of the lanes (pkg/changes: a failed
// event is retried after a second).
func (d *Dispatcher) consumer(quiet bool) changes.Consumer {
	return changes.Consumer{Name: "webhooks", Log: d.cfg.Logger, Quiet: quiet}
}

// control is the handler of the control loop: it follows the definitions
// and starts or stops lanes at the event's sequence.
func (d *Dispatcher) control(ctx context.Context, ev changes.Event, m events.Msg) error {
	if ev.Branch == content.BranchDefault {
		touches, err := d.touchesDefinitions(ctx, ev)
		if err != nil {
			return err
		}
		if touches {
			if err := d.reload(ctx); err != nil {
				return err
			}
		}
	}
	if time.Since(d.refreshed) >= refreshEvery {
		if err := d.reload(ctx); err != nil {
			return err
		}
		d.refresh(ctx)
	}
	d.reconcile(ctx, m.Sequence, nil)
	return nil
}

// reconcile starts the lanes of the wanted webhooks that have none: at
// stream sequence seq, or, when seq is 0 (Run), only those whose consumer
// exists (the others start with the control loop's next event, which is
// where the previous dispatcher left off). It stops the other lanes and
// deletes their consumers.
func (d *Dispatcher) reconcile(ctx context.Context, seq uint64, existing map[int64]bool) {
	in, over := d.wanted()
	if s := fmt.Sprint(over); len(over) > 0 && s != d.overCap {
		d.cfg.Logger.Warn("webhooks: more enabled webhooks than lanes; these get no deliveries",
			"maxLanes", d.cfg.MaxLanes, "webhooks", s)
	}
	d.overCap = fmt.Sprint(over)
	for _, id := range in {
		if d.lanes[id].alive() || (seq == 0 && !existing[id]) {
			continue
		}
		d.startLane(id, seq)
	}
	stale := map[int64]bool{}
	for id := range d.lanes {
		stale[id] = true
	}
	for id := range existing {
		stale[id] = true
	}
	for _, id := range in {
		delete(stale, id)
	}
	for id := range stale {
		d.stopLane(ctx, id)
	}
}

// startLane runs the lane of webhook id, starting at stream sequence
// start when its consumer does not exist yet.
func (d *Dispatcher) startLane(id int64, start uint64) {
	ctx, cancel := context.WithCancel(d.lanesCtx)
	l := &lane{d: d, id: id, cancel: cancel, done: make(chan struct{})}
	d.lanes[id] = l
	d.wg.Add(1)
	go func() { defer d.wg.Done(); l.run(ctx, start) }()
}

// stopLane stops the lane of webhook id, if running, and deletes its
// consumer.
func (d *Dispatcher) stopLane(ctx context.Context, id int64) {
	if l := d.lanes[id]; l != nil {
		delete(d.lanes, id)
		l.cancel()
		<-l.done
	}
	if del, ok := d.bus.(events.ConsumerDeleter); ok {
		if err := del.DeleteConsumer(ctx, LaneName(id)); err != nil {
			d.cfg.Logger.Warn("webhooks: deleting a lane's consumer failed", "webhook", id, "err", err)
		}
	}
}

// touchesDefinitions reports whether ev (of the default branch) may
// change a webhook definition.
func (d *Dispatcher) touchesDefinitions(ctx context.Context, ev changes.Event) (bool, error) {
	d.mu.Lock()
	for _, id := range ev.ObjectIDs {
		if _, ok := d.defs[id]; ok {
			d.mu.Unlock()
			return true, nil
		}
	}
	d.mu.Unlock()
	touch, err := content.Touched(ctx, d.st, ev)
	return touch.Has(content.TypeWebHookDefinition), err
}
