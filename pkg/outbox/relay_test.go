package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestRelayEndToEnd writes outbox rows in store transactions (SQLite) and
// checks that they arrive on the embedded JetStream stream exactly once and
// in commit order, also when the same rows are relayed twice.
func TestRelayEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	// A short lease so the events behind the injected failure come back soon.
	st, err := sqlite.Open(ctx, dir+"/cms.db", store.WithOutboxLease(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bus, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: dir + "/nats"})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()

	const n = 25
	for i := range n {
		tx, err := st.Begin(ctx, store.TxMeta{User: "test"})
		if err != nil {
			t.Fatal(err)
		}
		ev := store.OutboxEvent{Subject: "cms.changes.test", MsgID: fmt.Sprintf("tx-%d", tx.ID()), Payload: []byte(fmt.Sprint(i))}
		if err := tx.AppendOutbox(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A rolled-back transaction's event must never be published.
	tx, err := st.Begin(ctx, store.TxMeta{User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_ = tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.test", MsgID: "rolled-back", Payload: []byte("x")})
	_ = tx.Rollback()

	// A publisher that fails once in the middle: the relay must stop there
	// and deliver the rest later without duplicates.
	flaky := &failOnce{Publisher: bus, failAt: 10}
	relay := outbox.New(st, flaky, outbox.Options{Batch: 7, Idle: 10 * time.Millisecond})
	go func() { _ = relay.Run(ctx) }()

	var mu sync.Mutex
	var got []string
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- bus.Consume(cctx, "relay-test", "cms.changes.test", func(_ context.Context, m events.Msg) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(m.Data))
			if len(got) == n {
				ccancel()
			}
			return nil
		})
	}()
	select {
	case <-cctx.Done():
	case <-ctx.Done():
		t.Fatalf("only %d of %d events arrived", len(got), n)
	}
	<-done
	// Give a duplicate (if any) the chance to show up.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("got %d events, want %d: %v", len(got), n, got)
	}
	for i, v := range got {
		if v != fmt.Sprint(i) {
			t.Fatalf("event %d = %s: order broken: %v", i, v, got)
		}
	}
	if left, _ := st.ClaimOutbox(ctx, 100); len(left) != 0 {
		t.Fatalf("%d outbox rows left after relaying", len(left))
	}
}

type failOnce struct {
	events.Publisher
	mu     sync.Mutex
	calls  int
	failAt int
}

func (f *failOnce) Publish(ctx context.Context, e events.Event) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls == f.failAt
	f.mu.Unlock()
	if fail {
		return errors.New("injected publish failure")
	}
	return f.Publisher.Publish(ctx, e)
}
