package webhooks

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

func objectOf(typ int64, name string) content.ObjectInput {
	return content.ObjectInput{TypeID: typ, Values: []content.ValueInput{vin(content.AttrName, name)}}
}

// A receiver that is down for a while gets every event once back, in
// order per object, each signed; filters pick the events of each hook;
// disabled hooks get nothing.
func TestDeliveryAcrossOutage(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		types := e.create(t, objectOf(content.RootID, "Article"), objectOf(content.RootID, "Note"))
		article, note := types[0], types[1]
		other, _, err := e.content.CreateBranch(t.Context(), admin, []content.ValueInput{vin(content.AttrName, "other"), vin(content.AttrBranchParent, content.BranchDefault)})
		if err != nil {
			t.Fatal(err)
		}
		e.create(t,
			hook(rcv.srv.URL+"/all", "k"),
			hook(rcv.srv.URL+"/notes", "k", vin(content.AttrWebHookTypes, note), vin(content.AttrWebHookKinds, changes.KindUpdated)),
			hook(rcv.srv.URL+"/off", "k", vin(content.AttrWebHookEnabled, false)),
			hook(rcv.srv.URL+"/branch", "k", vin(content.AttrWebHookBranches, other.ID)),
		)
		rcv.down.Store(true)
		var failures atomic.Int32
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true},
			Retry: RetrySettings{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond, GiveUpAfter: time.Minute},
			OnAttempt: func(_ int64, _ changes.Event, a Attempt) {
				if !a.OK() {
					failures.Add(1)
				}
			}})
		a := e.create(t, objectOf(article, "a1"), objectOf(article, "a2"))
		n := e.create(t, objectOf(note, "n1"))
		for i := range 3 {
			e.rename(t, a[0], "a1 v"+string(rune('1'+i)))
			e.rename(t, n[0], "n1 v"+string(rune('1'+i)))
		}
		e.rename(t, a[1], "a2 v1")
		waitFor(t, "failed attempts while the receiver is down", func() bool { return failures.Load() >= 5 })
		rcv.down.Store(false)

		// /all: every event touching our objects, each once, in
		// transaction order per object.
		want := map[int64]int{a[0]: 4, a[1]: 2, n[0]: 4}
		perObject := func() map[int64][]int64 {
			m := map[int64][]int64{}
			for _, p := range rcv.payloads("/all") {
				for _, id := range p.Event.ObjectIDs {
					if _, ok := want[id]; ok {
						m[id] = append(m[id], p.Event.Transaction)
					}
				}
			}
			return m
		}
		waitFor(t, "every event at /all", func() bool {
			m := perObject()
			return len(m[a[0]]) >= 4 && len(m[a[1]]) >= 2 && len(m[n[0]]) >= 4
		})
		time.Sleep(200 * time.Millisecond) // duplicates would arrive now
		for id, txs := range perObject() {
			if len(txs) != want[id] || !slices.IsSorted(txs) || len(slices.Compact(slices.Clone(txs))) != len(txs) {
				t.Errorf("object %d: transactions %v, want %d ascending, none twice", id, txs, want[id])
			}
		}
		notes := rcv.payloads("/notes")
		if len(notes) != 3 {
			t.Fatalf("/notes got %d events, want the 3 note updates: %+v", len(notes), notes)
		}
		for _, p := range notes {
			if p.Event.Kind != changes.KindUpdated || !slices.Contains(p.Event.ObjectIDs, n[0]) || p.ID == "" {
				t.Errorf("/notes got %+v", p)
			}
		}
		if got := len(rcv.payloads("/off")) + len(rcv.payloads("/branch")); got != 0 || rcv.bad != 0 {
			t.Fatalf("disabled/other-branch hooks got %d events, %d bad signatures", got, rcv.bad)
		}
	})
}

// After the give-up time an event is dropped for that hook; later events
// still arrive.
func TestGiveUp(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hookID := e.create(t, hook(rcv.srv.URL+"/all", "k"))[0]
		rcv.down.Store(true)
		var tries atomic.Int32
		d := e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true},
			Retry:     RetrySettings{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, GiveUpAfter: 700 * time.Millisecond},
			OnAttempt: func(_ int64, _ changes.Event, a Attempt) { tries.Add(1) }})
		lost := e.create(t, objectOf(typ, "lost"))[0]
		waitFor(t, "the give-up time", func() bool { return tries.Load() >= 3 })
		time.Sleep(time.Second)
		rcv.down.Store(false)
		kept := e.create(t, objectOf(typ, "kept"))[0]
		waitFor(t, "the later event", func() bool {
			for _, p := range rcv.payloads("/all") {
				if slices.Contains(p.Event.ObjectIDs, kept) {
					return true
				}
			}
			return false
		})
		for _, p := range rcv.payloads("/all") {
			if slices.Contains(p.Event.ObjectIDs, lost) {
				t.Fatalf("the given-up event arrived: %+v", p)
			}
		}
		// The log shows the give-up: the last attempt of the delivery
		// retried longest, whose earlier attempts failed with the
		// receiver's 503.
		var gaveUp store.WebhookAttempt
		log := attempts(t, e, hookID)
		for _, a := range log {
			if a.Outcome == store.WebhookGaveUp && a.Attempt > gaveUp.Attempt {
				gaveUp = a
			}
		}
		if gaveUp.Status != 503 || gaveUp.Attempt < 3 {
			t.Fatalf("no give-up after several attempts recorded: %+v", log)
		}
		n := 0
		for _, a := range log {
			if a.Delivery == gaveUp.Delivery && a.ID != gaveUp.ID {
				n++
				if a.Outcome != store.WebhookFailed || a.Attempt >= gaveUp.Attempt {
					t.Errorf("attempt %d before the give-up: %+v", a.Attempt, a)
				}
			}
		}
		if n != gaveUp.Attempt-1 {
			t.Errorf("%d failed attempts recorded before give-up attempt %d", n, gaveUp.Attempt)
		}
		// The dispatcher's counters (cms_webhook_attempts_total) count
		// the attempts as the log records them (the log is written in the
		// background, so it may still lack the newest).
		if got := d.Stats(); got.GaveUp < 1 || got.Failed < int64(n) || got.Accepted < 1 {
			t.Errorf("dispatcher stats %+v, want a give-up, at least %d failures and an accepted delivery", got, n)
		}
	})
}
