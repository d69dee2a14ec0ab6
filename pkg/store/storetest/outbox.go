package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// outboxTrace is a W3C traceparent an outbox row keeps (pkg/tracing).
const outboxTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func testOutbox(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	ev, err := s.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(ev) != 0 {
		t.Fatalf("fresh outbox: %+v", ev)
	}

	tx, err := s.Begin(ctx, store.TxMeta{})
	must(t, err)
	must(t, tx.PutObjects(ctx, obj(1, 0, 1, "g1", "")))
	must(t, tx.AppendOutbox(ctx,
		store.OutboxEvent{Subject: "cms.objects.changed", MsgID: "m1", Payload: []byte(`{"id":1}`)},
		store.OutboxEvent{Subject: "cms.objects.changed", MsgID: "m2", Payload: []byte{0, 1, 2, 255}, Trace: outboxTrace}))
	mustBe(t, tx.AppendOutbox(ctx, store.OutboxEvent{MsgID: "no subject"}), store.ErrInvalidArgument, "event without subject")
	// Not claimable before commit. A backend may make the claim wait for
	// the open transaction (SQLite's single writer): a timeout is fine,
	// returning the uncommitted events is not.
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	ev, err = s.ClaimOutbox(wctx, 10)
	cancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ClaimOutbox during open tx: %v", err)
	}
	if len(ev) != 0 {
		t.Fatalf("uncommitted events claimed: %+v", ev)
	}
	must(t, tx.Commit(ctx))
	first := tx.ID()

	second := write(t, s, func(tx store.Tx) {
		must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.other", MsgID: "m3"}))
	})

	ev, err = s.ClaimOutbox(ctx, 2)
	must(t, err)
	if len(ev) != 2 || ev[0].MsgID != "m1" || ev[1].MsgID != "m2" {
		t.Fatalf("first claim = %+v", ev)
	}
	if ev[0].ID >= ev[1].ID || ev[0].TxID != first || ev[1].TxID != first ||
		ev[0].Subject != "cms.objects.changed" || string(ev[0].Payload) != `{"id":1}` ||
		fmt.Sprint(ev[1].Payload) != "[0 1 2 255]" || ev[0].Attempts != 1 ||
		ev[0].Trace != "" || ev[1].Trace != outboxTrace {
		t.Fatalf("first claim = %+v", ev)
	}
	// Leased events are not claimed again; the rest is.
	ev2, err := s.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(ev2) != 1 || ev2[0].MsgID != "m3" || ev2[0].TxID != second || ev2[0].ID <= ev[1].ID || len(ev2[0].Payload) != 0 {
		t.Fatalf("second claim = %+v", ev2)
	}
	must(t, s.AckOutbox(ctx, []int64{ev[0].ID, ev[1].ID, ev2[0].ID, 123456}))
	must(t, s.AckOutbox(ctx, nil))
	ev, err = s.ClaimOutbox(ctx, 10)
	must(t, err)
	if len(ev) != 0 {
		t.Fatalf("claim after ack = %+v", ev)
	}
}

// testOutboxConcurrentClaims lets several relays claim at once: every event
// is claimed exactly once while the lease runs.
func testOutboxConcurrentClaims(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	const total = 120
	write(t, s, func(tx store.Tx) {
		for i := range total {
			must(t, tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: strconv.Itoa(i)}))
		}
	})
	var mu sync.Mutex
	seen := map[int64]int{}
	claims := 0
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, err := s.ClaimOutbox(ctx, 7)
				if err != nil {
					errs <- err
					return
				}
				if len(ev) == 0 {
					return
				}
				mu.Lock()
				if claims += len(ev); claims > total {
					mu.Unlock()
					errs <- fmt.Errorf("%d claims for %d events: leased events were claimed again", claims, total)
					return
				}
				for i, e := range ev {
					seen[e.ID]++
					if i > 0 && e.ID <= ev[i-1].ID {
						errs <- fmt.Errorf("batch not in id order: %d after %d", e.ID, ev[i-1].ID)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct events, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %d claimed %d times", id, n)
		}
	}
}
