package webhooks

import (
	"context"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// laneOutage is how long the failing receiver of
// TestFailingWebhookDelaysNoOther stays down: long against the retry
// schedule of the test (20ms doubling to 200ms). CMS_TEST_WEBHOOK_OUTAGE
// (a Go duration, e.g. 1m as in the issue) overrides it.
func laneOutage(t *testing.T) time.Duration {
	if s := os.Getenv("CMS_TEST_WEBHOOK_OUTAGE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("CMS_TEST_WEBHOOK_OUTAGE=%q: want a positive duration", s)
		}
		return d
	}
	return 4 * time.Second
}

// healthyLatency bounds the wait of the healthy webhook for an event
// written while the other one fails (a run takes tens of ms, a loaded
// one up to a second or two now and then).
const healthyLatency = 3 * time.Second

// has reports whether rcv got an event touching object id at path, and
// how many times.
func has(rcv *receiver, path string, id int64) int {
	n := 0
	for _, p := range rcv.payloads(path) {
		if slices.Contains(p.Event.ObjectIDs, id) {
			n++
		}
	}
	return n
}

// write creates an event every gap until stop, or n events when n > 0,
// without waiting for their delivery; it returns the objects and when
// each was written.
func write(t *testing.T, e *env, typ int64, n int, stop time.Time, gap time.Duration) (ids []int64, written []time.Time) {
	t.Helper()
	for i := 0; n > 0 && i < n || n == 0 && time.Now().Before(stop); i++ {
		at := time.Now()
		ids, written = append(ids, e.create(t, objectOf(typ, "e"))[0]), append(written, at)
		time.Sleep(time.Until(at.Add(gap)))
	}
	return ids, written
}

// latencies waits (up to 30s) until rcv got the events of ids at path
// and returns how long each took and when it arrived.
func latencies(t *testing.T, rcv *receiver, path string, ids []int64, written []time.Time) (lat []time.Duration, arrived []time.Time) {
	t.Helper()
	waitFor(t, "the events at "+path, func() bool {
		_, ok := rcv.arrival(path, ids[len(ids)-1])
		return ok
	})
	for i, id := range ids {
		at, ok := rcv.arrival(path, id)
		if !ok {
			t.Fatalf("object %d's event never arrived at %s (later ones did)", id, path)
		}
		lat, arrived = append(lat, at.Sub(written[i])), append(arrived, at)
	}
	return lat, arrived
}

func worst(ls []time.Duration) time.Duration {
	w := time.Duration(0)
	for _, l := range ls {
		w = max(w, l)
	}
	return w
}

func median(ls []time.Duration) time.Duration {
	s := slices.Clone(ls)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// Two webhooks, one receiver down for laneOutage: the other receives
// every event written meanwhile promptly (healthyLatency), as before the
// outage; the failing one gets them all, in order, once it is back.
func TestFailingWebhookDelaysNoOther(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		healthy, failing := newReceiver(t, "k"), newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hooks := e.create(t, hook(healthy.srv.URL+"/h", "k"), hook(failing.srv.URL+"/f", "k"))
		var failed atomic.Int32
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true},
			Retry: RetrySettings{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, GiveUpAfter: time.Hour},
			OnAttempt: func(h int64, _ changes.Event, a Attempt) {
				if h == hooks[1] && !a.OK() {
					failed.Add(1)
				}
			}})
		outage := laneOutage(t)
		const gap = 100 * time.Millisecond

		// Before: both receivers up.
		beforeIDs, written := write(t, e, typ, 10, time.Time{}, gap)
		before, _ := latencies(t, healthy, "/h", beforeIDs, written)
		waitFor(t, "the failing receiver's events before its outage", func() bool { return has(failing, "/f", beforeIDs[len(beforeIDs)-1]) > 0 })

		// During: the failing receiver answers 503 while events are
		// written for the outage, and until the healthy webhook got them
		// all (at most healthyLatency longer).
		failing.down.Store(true)
		ids, written := write(t, e, typ, 0, time.Now().Add(outage), gap)
		failures := failed.Load()
		for deadline := time.Now().Add(healthyLatency); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, ok := healthy.arrival("/h", ids[len(ids)-1]); ok {
				break
			}
		}
		failing.down.Store(false)
		up := time.Now()
		during, at := latencies(t, healthy, "/h", ids, written)
		onTime := 0
		for i, l := range during {
			if l <= healthyLatency && at[i].Before(up) {
				onTime++
			}
		}
		t.Logf("healthy webhook: before the outage %d events, median %s, worst %s; during the %s outage of the other "+
			"%d events written, %d received on time (within %s, while the other was down), median %s, worst %s; "+
			"the failing webhook had %d failed attempts",
			len(before), median(before), worst(before), outage, len(during), onTime, healthyLatency, median(during), worst(during), failures)
		if onTime != len(during) || len(during) < 3 {
			t.Errorf("the healthy webhook received %d of %d events on time while the other failed", onTime, len(during))
		}
		if failures < 3 {
			t.Errorf("the failing webhook had %d failed attempts during the outage, want several", failures)
		}

		// After: the failing webhook gets every event, in order, and the
		// healthy one none twice.
		all := append(beforeIDs, ids...)
		waitFor(t, "every event at the failing receiver", func() bool { return has(failing, "/f", all[len(all)-1]) > 0 })
		time.Sleep(200 * time.Millisecond) // duplicates would arrive now
		var txs []int64
		for _, p := range failing.payloads("/f") {
			if slices.ContainsFunc(all, func(id int64) bool { return slices.Contains(p.Event.ObjectIDs, id) }) {
				txs = append(txs, p.Event.Transaction)
			}
		}
		if len(txs) != len(all) || !slices.IsSorted(txs) {
			t.Errorf("the failing webhook got %d deliveries of %d events, in order: %v", len(txs), len(all), slices.IsSorted(txs))
		}
		for _, id := range all {
			if n := has(healthy, "/h", id); n != 1 {
				t.Errorf("the healthy webhook got object %d's event %d times", id, n)
			}
		}
	})
}

// With the default retry schedule, a webhook whose receiver address is
// refused records one refused attempt per event, at once, and the other
// webhook receives every event promptly.
func TestRefusedWebhookDelaysNoOther(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		healthy := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hooks := e.create(t, hook(healthy.srv.URL+"/h", "k"), hook("http://10.1.2.3:9/private", "k"))
		loopback := netip.MustParseAddr("127.0.0.1")
		var mu sync.Mutex
		tries := map[int64]int{}
		e.dispatch(t, Config{Client: ClientSettings{allow: func(a netip.Addr) bool { return a == loopback }},
			OnAttempt: func(h int64, ev changes.Event, a Attempt) {
				if h == hooks[1] {
					mu.Lock()
					defer mu.Unlock()
					tries[ev.Transaction]++
				}
			}})
		ids, written := write(t, e, typ, 5, time.Time{}, 50*time.Millisecond)
		lat, _ := latencies(t, healthy, "/h", ids, written)
		t.Logf("healthy webhook beside a refused one: %d events, median %s, worst %s", len(ids), median(lat), worst(lat))
		if w := worst(lat); w > healthyLatency {
			t.Errorf("the healthy webhook waited up to %s for an event beside a refused one", w)
		}
		last, err := e.st.GetObject(t.Context(), content.BranchDefault, ids[len(ids)-1])
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the refused attempt of the last event", func() bool {
			as := attempts(t, e, hooks[1])
			return len(as) > 0 && as[0].Transaction == last.CreatedTx
		})
		time.Sleep(300 * time.Millisecond) // a retry (default schedule: within 1s) would come now
		for _, a := range attempts(t, e, hooks[1]) {
			if a.Outcome != store.WebhookRefusedAddress || a.Attempt != 1 {
				t.Errorf("refused webhook: attempt recorded as %+v, want the only one, refused-address", a)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for tx, n := range tries {
			if n != 1 {
				t.Errorf("transaction %d: %d attempts at the refused address", tx, n)
			}
		}
	})
}

// A restart resends to each webhook only what it did not acknowledge: the
// healthy webhook got every event before the restart and none again; the
// one that was down gets them all after it.
func TestRestartResendsOnlyUnacknowledged(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		// The stopped dispatchers leave nothing running: lanes, consumers,
		// deliveries under way, their HTTP connections.
		testenv.CheckGoroutines(t, testenv.EmbeddedNATSConsumers...)
		healthy, failing := newReceiver(t, "k"), newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		e.create(t, hook(healthy.srv.URL+"/h", "k"), hook(failing.srv.URL+"/f", "k"))
		failing.down.Store(true)
		cfg := Config{Client: ClientSettings{AllowPrivate: true}, Retry: RetrySettings{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = New(e.st, e.bus, cfg).Run(ctx) }()
		var ids []int64
		for range 5 {
			ids = append(ids, e.create(t, objectOf(typ, "x"))[0])
		}
		waitFor(t, "every event at the healthy webhook before the restart", func() bool { return has(healthy, "/h", ids[len(ids)-1]) > 0 })
		cancel()
		<-done
		failing.down.Store(false)
		e.dispatch(t, cfg)
		waitFor(t, "every event at the webhook that was down", func() bool { return has(failing, "/f", ids[len(ids)-1]) > 0 })
		time.Sleep(300 * time.Millisecond) // resent deliveries would arrive now
		for _, id := range ids {
			if h, f := has(healthy, "/h", id), has(failing, "/f", id); h != 1 || f != 1 {
				t.Errorf("object %d's event: %d deliveries to the healthy webhook, %d to the one that was down; want 1 each", id, h, f)
			}
		}
	})
}

// consumers lists the consumers of e's stream.
func consumers(t *testing.T, e *env) []string {
	t.Helper()
	names, err := e.bus.ConsumerNames(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Lanes follow the definitions: a webhook created (or enabled again)
// gets the events from its creation (enabling) on, none older; a disabled
// one's lane consumer is deleted and it gets nothing meanwhile.
func TestLanesFollowDefinitions(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		a := e.create(t, hook(rcv.srv.URL+"/a", "k"))[0]
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true}})
		event := func(paths ...string) int64 {
			t.Helper()
			id := e.create(t, objectOf(typ, "x"))[0]
			waitFor(t, "the event at "+paths[0], func() bool {
				for _, p := range paths {
					if has(rcv, p, id) == 0 {
						return false
					}
				}
				return true
			})
			return id
		}
		e1 := event("/a")
		b := e.create(t, hook(rcv.srv.URL+"/b", "k"))[0]
		e2 := event("/a", "/b")
		if !slices.Contains(consumers(t, e), LaneName(a)) || !slices.Contains(consumers(t, e), LaneName(b)) {
			t.Fatalf("consumers %v, want the lanes %s and %s", consumers(t, e), LaneName(a), LaneName(b))
		}
		setEnabled := func(on bool) {
			t.Helper()
			if _, err := e.content.UpdateObjects(t.Context(), "4", admin, []content.ObjectInput{{ID: b,
				Values: []content.ValueInput{vin(content.AttrWebHookEnabled, on)}}}); err != nil {
				t.Fatal(err)
			}
		}
		setEnabled(false)
		waitFor(t, "the disabled webhook's lane consumer deleted", func() bool { return !slices.Contains(consumers(t, e), LaneName(b)) })
		e3 := event("/a")
		setEnabled(true)
		e4 := event("/a", "/b")
		time.Sleep(200 * time.Millisecond) // late deliveries would arrive now
		for id, want := range map[int64][2]int{e1: {1, 0}, e2: {1, 1}, e3: {1, 0}, e4: {1, 1}} {
			if ga, gb := has(rcv, "/a", id), has(rcv, "/b", id); ga != want[0] || gb != want[1] {
				t.Errorf("object %d's event: %d deliveries to a, %d to b; want %v", id, ga, gb, want)
			}
		}
	})
}

// At most MaxLanes webhooks are served, the lowest ids.
func TestMaxLanes(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hooks := e.create(t, hook(rcv.srv.URL+"/first", "k"), hook(rcv.srv.URL+"/second", "k"))
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true}, MaxLanes: 1})
		id := e.create(t, objectOf(typ, "x"))[0]
		waitFor(t, "the event at the first webhook", func() bool { return has(rcv, "/first", id) > 0 })
		time.Sleep(200 * time.Millisecond) // the second webhook's delivery would arrive now
		if n := len(rcv.payloads("/second")); n != 0 || slices.Contains(consumers(t, e), LaneName(hooks[1])) {
			t.Fatalf("the webhook beyond MaxLanes got %d deliveries; consumers %v", n, consumers(t, e))
		}
	})
}

// Two dispatchers (two processes of the webhooks target) share the lanes:
// each event reaches each webhook once, and a deleted webhook's lane
// consumer, deleted by one of them, is not created again by the other.
func TestTwoDispatchersShareLanes(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hooks := e.create(t, hook(rcv.srv.URL+"/a", "k"), hook(rcv.srv.URL+"/b", "k"))
		cfg := Config{Client: ClientSettings{AllowPrivate: true}}
		e.dispatch(t, cfg)
		e.dispatch(t, cfg)
		var ids []int64
		for range 10 {
			ids = append(ids, e.create(t, objectOf(typ, "x"))[0])
		}
		waitFor(t, "every event at both webhooks", func() bool {
			return has(rcv, "/a", ids[len(ids)-1]) > 0 && has(rcv, "/b", ids[len(ids)-1]) > 0
		})
		if _, _, err := e.content.DeleteObjects(t.Context(), "4", admin, []string{strconv.FormatInt(hooks[1], 10)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the deleted webhook's lane consumer deleted", func() bool { return !slices.Contains(consumers(t, e), LaneName(hooks[1])) })
		last := e.create(t, objectOf(typ, "after"))[0]
		waitFor(t, "the event after the deletion", func() bool { return has(rcv, "/a", last) > 0 })
		time.Sleep(laneRestart + 500*time.Millisecond) // a lane restarting would create it again now
		if slices.Contains(consumers(t, e), LaneName(hooks[1])) || has(rcv, "/b", last) != 0 {
			t.Fatalf("the deleted webhook's lane came back: consumers %v", consumers(t, e))
		}
		for _, id := range ids {
			if a, b := has(rcv, "/a", id), has(rcv, "/b", id); a != 1 || b != 1 {
				t.Errorf("object %d's event: %d deliveries to a, %d to b; want 1 each", id, a, b)
			}
		}
	})
}
