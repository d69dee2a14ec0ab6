package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/storetest"
)

// withApplicationName returns dbURL whose sessions carry name in
// pg_stat_activity, so a test can end exactly one replica's sessions.
func withApplicationName(t testing.TB, dbURL, name string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs sql on a connection of its own to dbURL and returns the
// number of rows affected.
func exec(t testing.TB, dbURL, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	tag, err := c.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	return tag.RowsAffected()
}

// TestReplicaConformance runs storetest's replica suite: Crash ends every
// session of a replica on the server (pg_terminate_backend), as a killed
// pod's connections end, without closing the store.
func TestReplicaConformance(t *testing.T) {
	storetest.RunReplicas(t, func(t *testing.T) storetest.Replicas {
		dbURL := freshDatabase(t)
		names := map[store.Store]string{}
		return storetest.Replicas{
			Open: func() store.Store {
				name := "replica-" + strconv.Itoa(len(names))
				s := open(t, withApplicationName(t, dbURL, name))
				names[s] = name
				return s
			},
			Crash: func(s store.Store) {
				n := exec(t, dbURL, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
					WHERE datname = current_database() AND application_name = $1`, names[s])
				if n == 0 {
					t.Fatalf("crash %s: no session to end", names[s])
				}
			},
		}
	})
}

// stream is a fake JetStream stream: it stores each MsgID once, in the order
// of first publication, and remembers which relay published what.
type stream struct {
	mu     sync.Mutex
	stored []string
	seen   map[string]bool
	by     map[string][]string // relay → MsgIDs it published, duplicates included
}

// publisher returns relay's publisher to the stream; it fails every publish
// after the first failAfter ones when failAfter > 0.
func (s *stream) publisher(relay string, failAfter int) events.Publisher {
	return publishFunc(func(_ context.Context, e events.Event) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if failAfter > 0 && len(s.by[relay]) >= failAfter {
			return errors.New("injected publish failure")
		}
		s.by[relay] = append(s.by[relay], e.MsgID)
		if !s.seen[e.MsgID] {
			s.seen[e.MsgID] = true
			s.stored = append(s.stored, e.MsgID)
		}
		return nil
	})
}

type publishFunc func(ctx context.Context, e events.Event) error

func (f publishFunc) Publish(ctx context.Context, e events.Event) error { return f(ctx, e) }

// TestRelayHandoverPublishesUnackedFirst: two Management replicas run the
// outbox relay on one database. Only the first publishes; it claims a batch,
// publishes part of it and is then killed (its store closed: its lock
// session ends). The second takes over at once (no 30s lease), publishes
// the rows the first had claimed but not acked first, in id order, and then
// the rest: the stream holds every event once, in commit order.
func TestRelayHandoverPublishesUnackedFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbURL := freshDatabase(t)
	a, b := open(t, dbURL), open(t, dbURL)
	const total = 30
	for i := range total {
		tx, err := a.Begin(ctx, store.TxMeta{User: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: fmt.Sprintf("%03d", i)}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := &stream{seen: map[string]bool{}, by: map[string][]string{}}
	relayA := outbox.New(a, st.publisher("a", 5), outbox.Options{Batch: 10})
	relayB := outbox.New(b, st.publisher("b", 0), outbox.Options{Batch: 10})

	if n, err := relayA.RelayOnce(ctx); n != 5 || err == nil {
		t.Fatalf("first relay published %d events (err %v), want 5 and the injected failure", n, err)
	}
	for range 3 {
		if n, err := relayB.RelayOnce(ctx); n != 0 || err != nil {
			t.Fatalf("standby relay published %d events (err %v) while the first holds the lock", n, err)
		}
	}
	if err := a.Close(); err != nil { // the pod dies: its sessions end
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for published := 0; published < total-5; {
		if time.Now().After(deadline) {
			t.Fatalf("the second relay published %d of the %d events left", published, total-5)
		}
		n, err := relayB.RelayOnce(ctx)
		if err != nil {
			t.Logf("second relay: %v", err)
		}
		if published += n; n == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if got := fmt.Sprint(st.by["b"][:5]); got != "[005 006 007 008 009]" {
		t.Fatalf("after the handover the second relay published %s first, want the first relay's unacked 005…009", got)
	}
	if len(st.stored) != total {
		t.Fatalf("stream holds %d events, want %d", len(st.stored), total)
	}
	for i, id := range st.stored {
		if id != fmt.Sprintf("%03d", i) {
			t.Fatalf("stream out of commit order at %d: %v", i, st.stored)
		}
	}
}

// TestRelayLockLostWhenSessionKilled: when the server ends the lock's
// session of a store that is otherwise fine (a network cut, an operator's
// pg_terminate_backend), that store claims nothing more while another holds
// the lock; the other releases the leases of the first and claims its rows
// first; and the first takes the lock again when the other goes.
func TestRelayLockLostWhenSessionKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbURL := freshDatabase(t)
	a, b := open(t, dbURL), open(t, dbURL)
	tx, err := a.Begin(ctx, store.TxMeta{User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "s", MsgID: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	held, err := a.ClaimOutbox(ctx, 3)
	if err != nil || len(held) != 3 {
		t.Fatalf("first claim = %d events, %v", len(held), err)
	}
	if n := exec(t, dbURL, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`); n != 1 {
		t.Fatalf("ended %d lock sessions, want 1", n)
	}
	// b may try before the server has ended a's session; it gets the lock
	// within moments, not after the lease.
	var got []store.OutboxEvent
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the second store never took over")
		}
		if got, err = b.ClaimOutbox(ctx, 10); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != 6 || got[0].ID != held[0].ID {
		t.Fatalf("second store claimed %v first, want all 6 events from %d (the first store's leases released)", got, held[0].ID)
	}
	for range 3 {
		if evs, err := a.ClaimOutbox(ctx, 10); len(evs) != 0 {
			t.Fatalf("the store whose lock session ended claimed %d events (err %v)", len(evs), err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	var again []store.OutboxEvent
	for deadline := time.Now().Add(10 * time.Second); len(again) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first store never took the lock again")
		}
		again, _ = a.ClaimOutbox(ctx, 10)
		time.Sleep(20 * time.Millisecond)
	}
	if len(again) != 6 || again[0].ID != held[0].ID || again[0].Attempts != 3 {
		t.Fatalf("first store's claim after taking the lock again = %+v", again)
	}
}
