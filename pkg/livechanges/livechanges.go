// Package livechanges fans the change stream out to live subscribers (the
// Delivery change stream): one ephemeral consumer per process reads
// changes.Subjects, waits until the index has applied each event (the one
// index-version wait, indexdoc.ChangeTracking.WaitForVersion) and then
// hands it, with the types of its objects (Config.Types), to every
// subscriber whose filter matches (branches, kinds, types), through a bounded
// buffer per subscriber. A subscriber whose buffer is full is dropped
// (ErrSlowSubscriber) and never blocks the others. The most recent
// released events are retained in memory (Config.Retained) so a
// subscriber can resume after a version; a position older than what is
// retained is refused with ErrPositionTooOld. An event whose transaction
// the indexer parked (the index version counts it, the index lacks its
// changes: pkg/indexdoc) is not announced as applied: it is skipped
// (Stats.Parked); a later retry that applies it is not announced either,
// its version being past. The MaxSubscribers slots
// are shared fairly (pkg/fairshare, the caller of Subscribe's context):
// one user holds at most MaxSubscribersPerUser (a *fairshare.LimitError
// beyond, 429) and AdminReserve of them are left to administrators.
package livechanges

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/fairshare"
)

// Defaults of Config.
const (
	DefaultRetained       = 10000
	DefaultBuffer         = 256
	DefaultMaxSubscribers = 1000
	// DefaultMaxSubscribersPerUser and DefaultAdminReserve share the
	// subscribers: one user holds at most 50, administrators keep 50.
	DefaultMaxSubscribersPerUser = 50
	DefaultAdminReserve          = 50
	// CapSubscribersPerUser names the per-user cap in refusals (the
	// setting live.maxSubscribersPerUser).
	CapSubscribersPerUser = "live.maxSubscribersPerUser"
	DefaultIndexWait      = 30 * time.Second
	// DefaultStartSlack is how far before Run the consumer starts reading
	// the stream, so events stored just before the process started but
	// indexed after it are not missed.
	DefaultStartSlack = time.Minute
)

var (
	// ErrPositionTooOld means the resume version is older than the retained
	// events; the subscriber must reload and subscribe from now.
	ErrPositionTooOld = errors.New("livechanges: position older than the retained changes")
	// ErrSlowSubscriber means the subscriber's buffer filled up; it was dropped.
	ErrSlowSubscriber = errors.New("livechanges: subscriber too slow, buffer full")
	// ErrTooManySubscribers means the subscriptions the caller may take
	// (Config.MaxSubscribers, less AdminReserve for a non-administrator)
	// are in use.
	ErrTooManySubscribers = errors.New("livechanges: too many subscribers")
	// ErrClosed means the hub stopped.
	ErrClosed = errors.New("livechanges: closed")
	// ErrBadFilter means a filter names an unknown kind or too many types.
	ErrBadFilter = errors.New("livechanges: bad filter")
)

// MaxFilterTypes and MaxFilterKinds bound the types and kinds one filter
// lists.
const (
	MaxFilterTypes = 100
	MaxFilterKinds = 10
)

// Kinds are the event kinds a filter may name (pkg/changes).
var Kinds = []string{changes.KindCreated, changes.KindUpdated, changes.KindDeleted, changes.KindBranchDeleted, changes.KindComment}

// VersionWaiter is the index's change tracking (indexdoc.ChangeTracking):
// its version, and the transactions the indexer parked, which the version
// counts although the index lacks their changes.
type VersionWaiter interface {
	WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error)
	IsParked(ctx context.Context, tx int64) (bool, error)
}

// Config configures a Hub.
type Config struct {
	Consumer events.Consumer
	Index    VersionWaiter
	// Retained is how many released events are kept for resuming.
	Retained int
	// Buffer bounds the undelivered events of one subscriber.
	Buffer int
	// MaxSubscribers bounds concurrent subscribers.
	MaxSubscribers int
	// MaxSubscribersPerUser bounds the concurrent subscribers of one user.
	MaxSubscribersPerUser int
	// AdminReserve is how many of MaxSubscribers only administrators
	// take (negative: none).
	AdminReserve int
	// IndexWait bounds one wait for the index; the event is then retried.
	IndexWait time.Duration
	// StartSlack: see DefaultStartSlack.
	StartSlack time.Duration
	// Types returns the types of an event's objects
	// (content.Touched); an error retries the event. Nil: events
	// carry no types.
	Types func(context.Context, changes.Event) ([]int64, error)
	// BeforeRelease runs for each event once the index shows it and before
	// any subscriber gets it (Delivery evicts the cached answers the event
	// makes stale, so a client re-fetching on the event sees the change);
	// an error retries the event. Nil: nothing runs.
	BeforeRelease func(context.Context, changes.Event) error
}

func (c Config) withDefaults() Config {
	if c.Retained <= 0 {
		c.Retained = DefaultRetained
	}
	if c.Buffer <= 0 {
		c.Buffer = DefaultBuffer
	}
	if c.MaxSubscribers <= 0 {
		c.MaxSubscribers = DefaultMaxSubscribers
	}
	if c.MaxSubscribersPerUser <= 0 {
		c.MaxSubscribersPerUser = DefaultMaxSubscribersPerUser
	}
	c.AdminReserve = fairshare.ReserveOr(c.AdminReserve, DefaultAdminReserve)
	if c.IndexWait <= 0 {
		c.IndexWait = DefaultIndexWait
	}
	if c.StartSlack <= 0 {
		c.StartSlack = DefaultStartSlack
	}
	return c
}

// Change is a released event with the types of its objects.
type Change struct {
	changes.Event
	Types []int64
}

// Filter selects events. Empty fields match everything.
type Filter struct {
	// Branches: the event's branch is one of them (a branch and its
	// ancestors, whose changes it inherits).
	Branches []int64
	// Kinds: the event's kind is one of them.
	Kinds []string
	// Types: one of the event's objects has one of these types.
	Types []int64
}

// Validate refuses unknown kinds and more than MaxFilterTypes types or
// MaxFilterKinds kinds.
func (f Filter) Validate() error {
	if len(f.Kinds) > MaxFilterKinds {
		return fmt.Errorf("%w: %d kinds, at most %d", ErrBadFilter, len(f.Kinds), MaxFilterKinds)
	}
	for _, k := range f.Kinds {
		if !slices.Contains(Kinds, k) {
			return fmt.Errorf("%w: unknown kind %q (want one of %v)", ErrBadFilter, k, Kinds)
		}
	}
	if len(f.Types) > MaxFilterTypes {
		return fmt.Errorf("%w: %d types, at most %d", ErrBadFilter, len(f.Types), MaxFilterTypes)
	}
	return nil
}

func (f Filter) match(c Change) bool {
	if len(f.Branches) > 0 && !slices.Contains(f.Branches, c.Branch) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, c.Kind) {
		return false
	}
	return len(f.Types) == 0 || slices.ContainsFunc(c.Types, func(t int64) bool { return slices.Contains(f.Types, t) })
}

// Hub is the per-process fan-out.
type Hub struct {
	cfg   Config
	slots *fairshare.Limiter

	mu     sync.Mutex
	ready  chan struct{}
	floor  int64    // versions up to floor are not retained
	ring   []Change // released events, oldest first
	subs   map[*Subscription]struct{}
	closed bool
	stats  Stats // counters (mu held)
}

// Stats are a hub's counters, for metrics.
type Stats struct {
	Subscribers int   // subscriptions now
	Released    int64 // events handed out (after the index and BeforeRelease)
	Delivered   int64 // events put into a subscriber's buffer
	Dropped     int64 // subscribers dropped for a full buffer (ErrSlowSubscriber)
	Parked      int64 // events skipped: the indexer parked their transaction
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.stats
	st.Subscribers = len(h.subs)
	return st
}

// New returns a hub; Run feeds it.
func New(cfg Config) *Hub {
	cfg = cfg.withDefaults()
	return &Hub{cfg: cfg, ready: make(chan struct{}), subs: map[*Subscription]struct{}{},
		slots: fairshare.New("change stream subscriptions", fairshare.Limits{Total: cfg.MaxSubscribers,
			PerUser: cfg.MaxSubscribersPerUser, AdminReserve: cfg.AdminReserve, RetryAfter: 5 * time.Second,
			Cap: CapSubscribersPerUser})}
}

// Run consumes the change stream until ctx ends, then drops every
// subscriber with ErrClosed. Until the index answers its version the hub
// is not ready (retried every RetryStart).
func (h *Hub) Run(ctx context.Context) error {
	start := time.Now().Add(-h.cfg.StartSlack)
	var v int64
	for {
		var err error
		if v, err = h.cfg.Index.WaitForVersion(ctx, 0, 0); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			h.close()
			return nil
		case <-time.After(RetryStart):
		}
	}
	h.mu.Lock()
	h.floor = v
	close(h.ready)
	h.mu.Unlock()
	defer h.close()
	// A malformed event cannot be delivered: it is dropped with a log line.
	return changes.Consumer{Name: "change stream"}.Consume(ctx, h.cfg.Consumer, "livechanges", h.handle,
		events.WithEphemeral(), events.WithStartTime(start))
}

// RetryStart is how often Run retries reading the index version.
const RetryStart = time.Second

// Ready is closed once the hub knows its starting position.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

func (h *Hub) handle(ctx context.Context, ev changes.Event, _ events.Msg) error {
	if ev.Transaction <= h.Version() {
		// Released already (replayed after a reconnect) or applied before
		// the hub started (the StartSlack replay): no subscriber gets it,
		// so neither the eviction nor the types lookup is worth doing.
		return nil
	}
	if _, err := h.cfg.Index.WaitForVersion(ctx, ev.Transaction, h.cfg.IndexWait); err != nil {
		return err // retried by the consumer before any later event
	}
	if parked, err := h.cfg.Index.IsParked(ctx, ev.Transaction); err != nil {
		return err
	} else if parked {
		h.mu.Lock()
		h.stats.Parked++
		h.mu.Unlock()
		return nil
	}
	if h.cfg.BeforeRelease != nil {
		if err := h.cfg.BeforeRelease(ctx, ev); err != nil {
			return err
		}
	}
	c := Change{Event: ev}
	if h.cfg.Types != nil {
		var err error
		if c.Types, err = h.cfg.Types(ctx, ev); err != nil {
			return err
		}
	}
	h.release(c)
	return nil
}

func (h *Hub) release(ev Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Transaction <= h.versionLocked() {
		return // released already, or applied before the hub started
	}
	h.ring = append(h.ring, ev)
	h.stats.Released++
	if len(h.ring) > h.cfg.Retained {
		h.floor = h.ring[0].Transaction
		h.ring = slices.Delete(h.ring, 0, 1)
	}
	for s := range h.subs {
		if ev.Transaction <= s.Start || !s.filter.match(ev) {
			continue
		}
		select {
		case s.c <- ev:
			h.stats.Delivered++
		default:
			h.stats.Dropped++
			h.dropLocked(s, ErrSlowSubscriber)
		}
	}
}

// Close ends every subscription with ErrClosed and refuses new ones (a
// stopping process ends its streams, so clients resume elsewhere). Run
// keeps consuming until its context ends.
func (h *Hub) Close() { h.close() }

func (h *Hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.dropLocked(s, ErrClosed)
	}
}

func (h *Hub) dropLocked(s *Subscription, err error) {
	delete(h.subs, s)
	s.err = err
	close(s.c)
	s.release()
}

// Subscription receives the matching events on C, in version order. C is
// closed when the subscription ends; Err then says why.
type Subscription struct {
	C <-chan Change
	// Start is the version the subscription starts after: since, or the
	// last released version when since was 0.
	Start  int64
	c      chan Change
	hub    *Hub
	filter Filter
	err    error
	// release returns the subscription's slot.
	release func()
}

// Subscribe starts a subscription after version since (0: from now); a
// since ahead of this hub (another process released it first) delivers
// nothing up to it. It waits for Ready (bounded by ctx).
func (h *Hub) Subscribe(ctx context.Context, f Filter, since int64) (*Subscription, error) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if since < 0 {
		return nil, fmt.Errorf("%w: since %d is no version", ErrBadFilter, since)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	start := h.versionLocked()
	var backlog []Change
	if since > 0 {
		start = since
		if since < h.floor {
			return nil, fmt.Errorf("%w: %d < %d", ErrPositionTooOld, since, h.floor)
		}
		for _, ev := range h.ring {
			if ev.Transaction > since && f.match(ev) {
				backlog = append(backlog, ev)
			}
		}
	}
	release, err := h.slots.Acquire(ctx, fairshare.CallerFrom(ctx))
	switch {
	case errors.Is(err, fairshare.ErrBusy):
		return nil, ErrTooManySubscribers
	case err != nil:
		return nil, err // the caller's own cap: a *fairshare.LimitError
	}
	c := make(chan Change, len(backlog)+h.cfg.Buffer)
	for _, ev := range backlog {
		c <- ev
	}
	s := &Subscription{C: c, Start: start, c: c, hub: h, filter: f, release: release}
	h.subs[s] = struct{}{}
	return s, nil
}

// Version is the last released version (0 before the first).
func (h *Hub) Version() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.versionLocked()
}

func (h *Hub) versionLocked() int64 {
	if n := len(h.ring); n > 0 {
		return h.ring[n-1].Transaction
	}
	return h.floor
}

// Err says why C was closed; nil while open or after Close.
func (s *Subscription) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if _, ok := s.hub.subs[s]; ok {
		s.hub.dropLocked(s, nil)
	}
}
