package livechanges_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/livechanges"
	"github.com/cmsplatform/cms/pkg/testenv"
	testsetups "github.com/cmsplatform/cms/pkg/testenv/setups"
)

// indexVersion stands in for the index's change tracking: the tests
// decide when the index "applies" a version, to check that nothing is
// released before.
type indexVersion struct {
	mu     sync.Mutex
	v      int64
	ch     chan struct{}
	parked map[int64]bool // transactions the indexer parked
}

func newIndex() *indexVersion { return &indexVersion{ch: make(chan struct{})} }

func (x *indexVersion) set(v int64) {
	x.mu.Lock()
	x.v = v
	close(x.ch)
	x.ch = make(chan struct{})
	x.mu.Unlock()
}

func (x *indexVersion) park(tx int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.parked == nil {
		x.parked = map[int64]bool{}
	}
	x.parked[tx] = true
}

func (x *indexVersion) IsParked(_ context.Context, tx int64) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.parked[tx], nil
}

func (x *indexVersion) version() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.v
}

func (x *indexVersion) WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	deadline := time.After(maxWait)
	for {
		x.mu.Lock()
		v, ch := x.v, x.ch
		x.mu.Unlock()
		if v >= minVersion {
			return v, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return v, errors.New("timeout")
		case <-ctx.Done():
			return v, ctx.Err()
		}
	}
}

type setup struct {
	name string
	bus  func(t *testing.T) events.Bus
}

func setups() []setup {
	return []setup{
		{"embedded", func(t *testing.T) events.Bus { return testsetups.EmbeddedBus(t) }},
		{"nats", func(t *testing.T) events.Bus {
			b, _ := testsetups.NATSBus(t, "live", "livechanges-test")
			return b
		}},
	}
}

func forEach(t *testing.T, f func(t *testing.T, bus events.Bus)) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			// Once the hub and the bus stopped, none of their goroutines
			// (consumer, fan-out, subscriptions) runs on.
			testenv.CheckGoroutines(t)
			f(t, s.bus(t))
		})
	}
}

func publish(t *testing.T, bus events.Bus, ev changes.Event) {
	t.Helper()
	data, err := changes.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(t.Context(), events.Event{Subject: changes.Subject(ev.Branch), MsgID: changes.MsgID(ev.Transaction), Data: data}); err != nil {
		t.Fatal(err)
	}
}

func startHub(t *testing.T, bus events.Bus, idx *indexVersion, cfg livechanges.Config) *livechanges.Hub {
	cfg.Consumer, cfg.Index = bus, idx
	h := livechanges.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-h.Ready()
	return h
}

func next(t *testing.T, s *livechanges.Subscription) livechanges.Change {
	t.Helper()
	select {
	case ev, ok := <-s.C:
		if !ok {
			t.Fatalf("subscription closed: %v", s.Err())
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return livechanges.Change{}
}

func quiet(t *testing.T, s *livechanges.Subscription) {
	t.Helper()
	select {
	case ev := <-s.C:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestFiltersAndIndexWait(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		h := startHub(t, bus, idx, livechanges.Config{})
		all, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		b2, _ := h.Subscribe(t.Context(), livechanges.Filter{Branches: []int64{2}}, 0)
		del, _ := h.Subscribe(t.Context(), livechanges.Filter{Kinds: []string{changes.KindDeleted}}, 0)
		publish(t, bus, changes.Event{Branch: 1, Transaction: 1, Kind: changes.KindCreated, ObjectIDs: []int64{10}})
		publish(t, bus, changes.Event{Branch: 2, Transaction: 2, Kind: changes.KindUpdated, ObjectIDs: []int64{11}})
		publish(t, bus, changes.Event{Branch: 2, Transaction: 3, Kind: changes.KindDeleted, ObjectIDs: []int64{11}})
		quiet(t, all) // the index has not applied version 1 yet
		idx.set(3)
		for want := int64(1); want <= 3; want++ {
			if ev := next(t, all); ev.Transaction != want {
				t.Fatalf("all: got %d want %d", ev.Transaction, want)
			}
		}
		if ev := next(t, b2); ev.Transaction != 2 {
			t.Fatalf("branch 2: got %d", ev.Transaction)
		}
		if ev := next(t, b2); ev.Transaction != 3 {
			t.Fatalf("branch 2: got %d", ev.Transaction)
		}
		if ev := next(t, del); ev.Transaction != 3 || ev.Kind != changes.KindDeleted {
			t.Fatalf("deleted: got %+v", ev)
		}
		quiet(t, b2)
		quiet(t, del)
	})
}

// TestParkedNotAnnounced: the index version counts a parked transaction
// although the index lacks its changes; the stream must not announce it
// as applied (nor retain it for a resume), and goes on with the next one.
func TestParkedNotAnnounced(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		h := startHub(t, bus, idx, livechanges.Config{})
		all, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		idx.park(2)
		for tx := int64(1); tx <= 3; tx++ {
			publish(t, bus, changes.Event{Branch: 1, Transaction: tx, Kind: changes.KindCreated, ObjectIDs: []int64{10 + tx}})
		}
		idx.set(3)
		if ev := next(t, all); ev.Transaction != 1 {
			t.Fatalf("got %d, want 1", ev.Transaction)
		}
		if ev := next(t, all); ev.Transaction != 3 {
			t.Fatalf("got %d, want 3: the parked transaction 2 was announced as applied", ev.Transaction)
		}
		quiet(t, all)
		resumed, err := h.Subscribe(t.Context(), livechanges.Filter{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ev := next(t, resumed); ev.Transaction != 3 {
			t.Fatalf("resume after 1: got %d, want 3", ev.Transaction)
		}
		if st := h.Stats(); st.Parked != 1 || st.Released != 2 {
			t.Fatalf("stats %+v, want 1 parked, 2 released", st)
		}
	})
}

func TestResumeAndRetention(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		idx.set(1000)
		h := startHub(t, bus, idx, livechanges.Config{Retained: 5})
		live, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		first, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		for tx := int64(1001); tx <= 1004; tx++ {
			publish(t, bus, changes.Event{Branch: 1, Transaction: tx, Kind: changes.KindUpdated})
		}
		idx.set(1004)
		for tx := int64(1001); tx <= 1004; tx++ {
			next(t, live)
		}
		// The client saw up to 1002, disconnected, and resumes.
		first.Close()
		publish(t, bus, changes.Event{Branch: 1, Transaction: 1005, Kind: changes.KindUpdated})
		idx.set(2000)
		next(t, live)
		resumed, err := h.Subscribe(t.Context(), livechanges.Filter{}, 1002)
		if err != nil {
			t.Fatal(err)
		}
		publish(t, bus, changes.Event{Branch: 1, Transaction: 1006, Kind: changes.KindUpdated})
		for want := int64(1003); want <= 1006; want++ {
			if ev := next(t, resumed); ev.Transaction != want {
				t.Fatalf("resumed: got %d want %d", ev.Transaction, want)
			}
		}
		quiet(t, resumed)
		// 1006 pushed 1001 out of the 5 retained: 1000 is still the
		// start position (nothing lost after it), 1001 is not.
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{}, 1000); !errors.Is(err, livechanges.ErrPositionTooOld) {
			t.Fatalf("since 1000: %v, want ErrPositionTooOld", err)
		}
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{}, 999); !errors.Is(err, livechanges.ErrPositionTooOld) {
			t.Fatalf("since 999: %v", err)
		}
		if s, err := h.Subscribe(t.Context(), livechanges.Filter{}, 1001); err != nil {
			t.Fatalf("since 1001: %v", err)
		} else if ev := next(t, s); ev.Transaction != 1002 {
			t.Fatalf("since 1001: got %d", ev.Transaction)
		}
	})
}

func TestSlowSubscriberDropped(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		idx.set(1 << 40)
		h := startHub(t, bus, idx, livechanges.Config{Buffer: 2, MaxSubscribers: 2, AdminReserve: -1})
		slow, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		fast, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{}, 0); !errors.Is(err, livechanges.ErrTooManySubscribers) {
			t.Fatalf("third subscriber: %v", err)
		}
		base := int64(1<<40) + 1
		for i := int64(0); i < 5; i++ {
			publish(t, bus, changes.Event{Branch: 1, Transaction: base + i, Kind: changes.KindUpdated})
			idx.set(base + i)
			if ev := next(t, fast); ev.Transaction != base+i {
				t.Fatalf("fast: got %d", ev.Transaction)
			}
		}
		n := 0
		for range slow.C {
			n++
		}
		if n != 2 || !errors.Is(slow.Err(), livechanges.ErrSlowSubscriber) {
			t.Fatalf("slow: %d events, err %v", n, slow.Err())
		}
		// 5 released; fast got 5, slow 2 before it was dropped.
		if st := h.Stats(); st != (livechanges.Stats{Subscribers: 1, Released: 5, Delivered: 7, Dropped: 1}) {
			t.Errorf("stats %+v", st)
		}
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{}, 0); err != nil {
			t.Fatalf("a dropped subscriber frees its slot: %v", err)
		}
	})
}

func TestTypesBranchesAndStart(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		idx.set(100)
		typeOf := map[int64]int64{10: 7, 11: 8, 12: 7}
		lookups := 0
		h := startHub(t, bus, idx, livechanges.Config{Types: func(_ context.Context, ev changes.Event) ([]int64, error) {
			lookups++
			if lookups == 1 {
				return nil, errors.New("store unavailable") // the event is retried
			}
			var out []int64
			for _, id := range ev.ObjectIDs {
				out = append(out, typeOf[id])
			}
			return out, nil
		}})
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{Kinds: []string{"renamed"}}, 0); !errors.Is(err, livechanges.ErrBadFilter) {
			t.Fatalf("unknown kind: %v", err)
		}
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{Types: make([]int64, livechanges.MaxFilterTypes+1)}, 0); !errors.Is(err, livechanges.ErrBadFilter) {
			t.Fatalf("too many types: %v", err)
		}
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{Kinds: slices.Repeat([]string{"created"}, livechanges.MaxFilterKinds+1)}, 0); !errors.Is(err, livechanges.ErrBadFilter) {
			t.Fatalf("too many kinds: %v", err)
		}
		if _, err := h.Subscribe(t.Context(), livechanges.Filter{}, -1); !errors.Is(err, livechanges.ErrBadFilter) {
			t.Fatalf("negative since: %v", err)
		}
		type7, _ := h.Subscribe(t.Context(), livechanges.Filter{Types: []int64{7}}, 0)
		// Branch 5 inherits from branch 4: it sees the changes of both.
		chain, _ := h.Subscribe(t.Context(), livechanges.Filter{Branches: []int64{5, 4}}, 0)
		// A resume position ahead of the hub: nothing up to it.
		ahead, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 102)
		if type7.Start != 100 || ahead.Start != 102 {
			t.Fatalf("start: %d, %d", type7.Start, ahead.Start)
		}
		publish(t, bus, changes.Event{Branch: 4, Transaction: 101, Kind: changes.KindCreated, ObjectIDs: []int64{10, 11}})
		publish(t, bus, changes.Event{Branch: 6, Transaction: 102, Kind: changes.KindUpdated, ObjectIDs: []int64{11}})
		publish(t, bus, changes.Event{Branch: 5, Transaction: 103, Kind: changes.KindDeleted, ObjectIDs: []int64{12}})
		idx.set(103)
		if c := next(t, type7); c.Transaction != 101 || !slices.Equal(c.Types, []int64{7, 8}) {
			t.Fatalf("type 7: %+v", c)
		}
		if c := next(t, type7); c.Transaction != 103 {
			t.Fatalf("type 7: %+v", c)
		}
		for _, want := range []int64{101, 103} {
			if c := next(t, chain); c.Transaction != want {
				t.Fatalf("branches 5, 4: got %d want %d", c.Transaction, want)
			}
		}
		if c := next(t, ahead); c.Transaction != 103 {
			t.Fatalf("ahead: %+v", c)
		}
		quiet(t, type7)
		quiet(t, chain)
		quiet(t, ahead)
	})
}

// flakyIndex fails its first answers, as an index that is not up yet.
type flakyIndex struct {
	*indexVersion
	mu    sync.Mutex
	fails int
}

func (f *flakyIndex) WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return 0, errors.New("index unavailable")
	}
	return f.indexVersion.WaitForVersion(ctx, minVersion, maxWait)
}

func TestRunWaitsForTheIndex(t *testing.T) {
	testenv.CheckGoroutines(t) // Run's retries of the index end with its context
	bus := testsetups.EmbeddedBus(t)
	idx := &flakyIndex{indexVersion: newIndex(), fails: 2}
	h := livechanges.New(livechanges.Config{Consumer: bus, Index: idx})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	short, stop := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer stop()
	if _, err := h.Subscribe(short, livechanges.Filter{}, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("before the index answers: %v", err)
	}
	select {
	case <-h.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after the index came up")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// BeforeRelease runs before a subscriber gets the event (Delivery evicts
// its cache there); an error holds the event back and retries it.
func TestBeforeReleaseRunsFirst(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		var mu sync.Mutex
		evicted := map[int64]int{}
		failOnce := true
		h := startHub(t, bus, idx, livechanges.Config{BeforeRelease: func(_ context.Context, ev changes.Event) error {
			mu.Lock()
			defer mu.Unlock()
			if ev.Transaction == 2 && failOnce {
				failOnce = false
				return errors.New("cache unreachable")
			}
			evicted[ev.Transaction]++
			return nil
		}})
		s, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		for tx := int64(1); tx <= 3; tx++ {
			publish(t, bus, changes.Event{Branch: 4, Transaction: tx, Kind: changes.KindUpdated, ObjectIDs: []int64{tx}})
		}
		idx.set(3)
		for want := int64(1); want <= 3; want++ {
			ev := next(t, s)
			mu.Lock()
			n := evicted[ev.Transaction]
			mu.Unlock()
			if ev.Transaction != want || n == 0 {
				t.Fatalf("got transaction %d (want %d), evicted %d times before release", ev.Transaction, want, n)
			}
		}
	})
}

// Events the index applied before the hub started are replayed (the
// StartSlack) but reach no subscriber: they cost neither a types lookup
// nor BeforeRelease.
func TestReplayedEventsCostNothing(t *testing.T) {
	forEach(t, func(t *testing.T, bus events.Bus) {
		idx := newIndex()
		for tx := int64(1); tx <= 5; tx++ {
			publish(t, bus, changes.Event{Branch: 4, Transaction: tx, Kind: changes.KindUpdated, ObjectIDs: []int64{tx}})
		}
		idx.set(5)
		var mu sync.Mutex
		var typed, released []int64
		h := startHub(t, bus, idx, livechanges.Config{
			Types: func(_ context.Context, ev changes.Event) ([]int64, error) {
				mu.Lock()
				defer mu.Unlock()
				typed = append(typed, ev.Transaction)
				return nil, nil
			},
			BeforeRelease: func(_ context.Context, ev changes.Event) error {
				mu.Lock()
				defer mu.Unlock()
				released = append(released, ev.Transaction)
				return nil
			}})
		s, _ := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
		publish(t, bus, changes.Event{Branch: 4, Transaction: 6, Kind: changes.KindUpdated, ObjectIDs: []int64{6}})
		idx.set(6)
		if ev := next(t, s); ev.Transaction != 6 {
			t.Fatalf("got transaction %d, want 6", ev.Transaction)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(typed, []int64{6}) || !slices.Equal(released, []int64{6}) {
			t.Errorf("types looked up for %v, BeforeRelease ran for %v; want only 6", typed, released)
		}
	})
}
