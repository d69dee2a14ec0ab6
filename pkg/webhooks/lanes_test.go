package webhooks

import (
	"context"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
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
// written while the other one fails (an unloaded run takes tens of ms).
const healthyLatency = 2 * time.Second

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

// latencies writes an event at least every gap until stop, or n events
// when n > 0, and measures for each how long the receiver took to get it
// at path (up to giveUp; -1 = not received), one event at a time.
func latencies(t *testing.T, e *env, typ int64, rcv *receiver, path string, n int, stop time.Time, gap, giveUp time.Duration) (ids []int64, lat []time.Duration, at []time.Time) {
	t.Helper()
	for i := 0; n > 0 && i < n || n == 0 && time.Now().Before(stop); i++ {
		written := time.Now()
		id := e.create(t, objectOf(typ, "e"))[0]
		ids = append(ids, id)
		l := time.Duration(-1)
		for time.Since(written) < giveUp {
			if has(rcv, path, id) > 0 {
				l = time.Since(written)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat, at = append(lat, l), append(at, time.Now())
		time.Sleep(time.Until(written.Add(gap)))
	}
	return ids, lat, at
}

func worst(ls []time.Duration) time.Duration {
	w := time.Duration(0)
	for _, l := range ls {
		if l < 0 {
			return -1
		}
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
		beforeIDs, before, _ := latencies(t, e, typ, healthy, "/h", 10, time.Time{}, gap, 30*time.Second)
		waitFor(t, "the failing receiver's events before its outage", func() bool { return has(failing, "/f", beforeIDs[len(beforeIDs)-1]) > 0 })

		// During: the failing receiver answers 503 until the outage ends.
		failing.down.Store(true)
		end := time.Now().Add(outage)
		time.AfterFunc(outage, func() { failing.down.Store(false) })
		ids, during, at := latencies(t, e, typ, healthy, "/h", 0, end, gap, outage+30*time.Second)
		onTime := 0
		for i, l := range during {
			if l >= 0 && l <= healthyLatency && at[i].Before(end) {
				onTime++
			}
		}
		failures := failed.Load()
		t.Logf("healthy webhook: before the outage %d events, median %s, worst %s; during the %s outage of the other "+
			"%d events written, %d received on time (within %s, before the outage ended), median %s, worst %s; "+
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
		ids, lat, _ := latencies(t, e, typ, healthy, "/h", 5, time.Time{}, 0, 30*time.Second)
		t.Logf("healthy webhook beside a refused one: %d events, median %s, worst %s", len(ids), median(lat), worst(lat))
		if w := worst(lat); w < 0 || w > healthyLatency {
			t.Errorf("the healthy webhook waited up to %s (-1: never) for an event beside a refused one", w)
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
