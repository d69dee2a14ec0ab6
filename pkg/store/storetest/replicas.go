package storetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// Replicas are the stores of one deployment's replicas on one database.
type Replicas struct {
	// Open returns another store on the same database, as a new replica
	// opens it. The first call gets an empty, migrated database. The
	// factory closes the stores at cleanup.
	Open func() store.Store
	// Crash ends a store the way a killed process ends it: its sessions
	// are gone, nothing is cleaned up.
	Crash func(store.Store)
}

// ReplicasFactory returns fresh Replicas for one test.
type ReplicasFactory func(t *testing.T) Replicas

// RunReplicas runs the conformance tests of a backend that several
// processes share (PostgreSQL): whatever the number of replicas and
// however they end, the outbox is claimed in commit order, so the stream
// gets the events in commit order. A backend whose database serves one
// process (SQLite: `cms run` locks its data dir) does not run them; it
// releases all leases when it opens instead.
func RunReplicas(t *testing.T, newReplicas ReplicasFactory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, r Replicas)
	}{
		{"OutboxClaimNeverPassesAnotherRelaysLease", testOutboxClaimNeverPassesLease},
		{"OutboxHandoverAfterCrash", testOutboxHandoverAfterCrash},
		{"OutboxRelaysPublishInCommitOrder", testOutboxRelaysPublishInOrder},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newReplicas(t))
		})
	}
}

// appendEvents commits n events, one transaction each (outbox ids follow
// commit order), with MsgIDs first, first+1 ….
func appendEvents(t *testing.T, s store.Store, first, n int) {
	t.Helper()
	for i := range n {
		write(t, s, func(tx store.Tx) {
			must(t, tx.AppendOutbox(ctxT(t), store.OutboxEvent{Subject: "s", MsgID: strconv.Itoa(first + i)}))
		})
	}
}

func eventIDs(evs []store.OutboxEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// testOutboxClaimNeverPassesLease: while one relay holds claimed, unacked
// events, another relay's claim returns none newer than them (with a
// single claiming relay, it returns none at all), and the first relay goes
// on claiming in order.
func testOutboxClaimNeverPassesLease(t *testing.T, r Replicas) {
	ctx := ctxT(t)
	a, b := r.Open(), r.Open()
	appendEvents(t, a, 0, 10)

	held, err := a.ClaimOutbox(ctx, 4)
	must(t, err)
	if len(held) != 4 {
		t.Fatalf("first relay claimed %v, want 4 events", eventIDs(held))
	}
	for range 3 { // a standby relay retries on every poll
		other, err := b.ClaimOutbox(ctx, 10)
		must(t, err)
		for _, e := range other {
			if e.ID > held[0].ID {
				t.Fatalf("second relay claimed event %d while event %d is leased and unacked by the first: "+
					"it could be published before it", e.ID, held[0].ID)
			}
		}
	}
	must(t, a.AckOutbox(ctx, eventIDs(held)))
	rest, err := a.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(rest) != 6 || rest[0].ID <= held[3].ID {
		t.Fatalf("first relay's next claim = %v after %v, want the 6 newer events", eventIDs(rest), eventIDs(held))
	}
	other, err := b.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(other) != 0 {
		t.Fatalf("second relay claimed %v while the first relay holds them", eventIDs(other))
	}
}

// testOutboxHandoverAfterCrash: the relay that claimed events crashes
// before acking them; another relay takes over without waiting out the
// lease and first claims the events the crashed one had not acked, in id
// order, then the rest.
func testOutboxHandoverAfterCrash(t *testing.T, r Replicas) {
	ctx := ctxT(t)
	a, b := r.Open(), r.Open()
	appendEvents(t, a, 0, 10)
	first, err := a.ClaimOutbox(ctx, 3)
	must(t, err)
	must(t, a.AckOutbox(ctx, eventIDs(first)))
	unacked, err := a.ClaimOutbox(ctx, 4)
	must(t, err)
	if len(unacked) != 4 {
		t.Fatalf("first relay claimed %v, want 4 events", eventIDs(unacked))
	}
	r.Crash(a)

	// The default lease (30s) outlasts this deadline: the handover must
	// not wait for it.
	deadline := time.Now().Add(10 * time.Second)
	var got []store.OutboxEvent
	for len(got) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no relay claims the events of the crashed relay")
		}
		got, err = b.ClaimOutbox(ctx, 4)
		if err != nil {
			t.Logf("claim after crash: %v", err) // a backend may fail while it notices
		}
		if len(got) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if fmt.Sprint(eventIDs(got)) != fmt.Sprint(eventIDs(unacked)) {
		t.Fatalf("after the crash the next relay claimed %v first, want the unacked %v", eventIDs(got), eventIDs(unacked))
	}
	for _, e := range got {
		if e.Attempts != 2 {
			t.Fatalf("event %d: Attempts = %d, want 2", e.ID, e.Attempts)
		}
	}
	must(t, b.AckOutbox(ctx, eventIDs(got)))
	rest, err := b.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(rest) != 3 || rest[0].ID <= unacked[3].ID {
		t.Fatalf("then claimed %v, want the 3 newest events", eventIDs(rest))
	}
}

// testOutboxRelaysPublishInOrder runs relay loops on three replicas at once
// (claim, publish to one shared stream, ack) while events are written: the
// stream gets every event, in commit order.
func testOutboxRelaysPublishInOrder(t *testing.T, r Replicas) {
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	const total = 300
	stores := []store.Store{r.Open(), r.Open(), r.Open()}
	var mu sync.Mutex
	var stream []int64
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				evs, err := s.ClaimOutbox(ctx, 7)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				if len(evs) == 0 {
					time.Sleep(2 * time.Millisecond)
					continue
				}
				mu.Lock()
				for _, e := range evs {
					stream = append(stream, e.ID)
				}
				mu.Unlock()
				if err := s.AckOutbox(ctx, eventIDs(evs)); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}
	appendEvents(t, stores[0], 0, total)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(stream)
		mu.Unlock()
		if n >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(stream) != total {
		t.Fatalf("stream got %d events, want %d", len(stream), total)
	}
	for i := 1; i < len(stream); i++ {
		if stream[i] <= stream[i-1] {
			t.Fatalf("stream out of commit order at %d: event %d after %d", i, stream[i], stream[i-1])
		}
	}
}
