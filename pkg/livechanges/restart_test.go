package livechanges_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/livechanges"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// natsRestartGap bounds how long after a NATS restart a subscription that
// stayed open receives the first change written after it.
const natsRestartGap = 5 * time.Second

// TestSubscriptionAcrossNATSRestart keeps a subscription (what an open
// SSE stream of Delivery reads) open while the NATS server restarts: a
// private nats-server (the code of the binary, in process, JetStream on
// a file store), shut down and started again on the same port and store
// directory, since a test must not restart the shared one. The hub's
// connection uses the client defaults of a deployment (reconnect every
// 2 s). A change written after the restart must reach the subscription
// within natsRestartGap of the restart. Once, in a deployment, nothing
// came for 22 s.
func TestSubscriptionAcrossNATSRestart(t *testing.T) {
	// Nothing of the hub, the clients (reconnecting across the restart) or
	// the private server runs on once they are closed.
	testenv.CheckGoroutines(t)
	srv := startPrivateNATS(t)
	hubBus, err := natsjs.Connect(t.Context(), srv.url, natsjs.Options{Name: "live-hub"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hubBus.Close() })
	// The writer (Management's relay) reconnects at once: the gap
	// measured is the hub's.
	pub, err := natsjs.Connect(t.Context(), srv.url, natsjs.Options{Name: "live-writer",
		NATSOptions: []nats.Option{nats.ReconnectWait(20 * time.Millisecond), nats.ReconnectJitter(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() })

	idx := newIndex()
	h := startHub(t, hubBus, idx, livechanges.Config{})
	sub, err := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, pub, changes.Event{Branch: 4, Transaction: 1, Kind: changes.KindCreated, ObjectIDs: []int64{10}})
	idx.set(1)
	if ev := next(t, sub); ev.Transaction != 1 {
		t.Fatalf("before the restart: got %d", ev.Transaction)
	}

	srv.restart(t, nil)
	restarted := time.Now()
	idx.set(2) // the index shows the write at once
	written := writeRetrying(t, pub, changes.Event{Branch: 4, Transaction: 2, Kind: changes.KindUpdated, ObjectIDs: []int64{10}})
	select {
	case ev, ok := <-sub.C:
		if !ok {
			t.Fatalf("subscription closed across the restart: %v", sub.Err())
		}
		gap := time.Since(restarted)
		t.Logf("first change after the NATS restart: %v after it, %v after the write (stored %v after the restart)",
			gap.Round(time.Millisecond), time.Since(written).Round(time.Millisecond), written.Sub(restarted).Round(time.Millisecond))
		if ev.Transaction != 2 {
			t.Fatalf("after the restart: got %d, want 2", ev.Transaction)
		}
		if gap > natsRestartGap {
			t.Errorf("first change %v after the NATS restart, want at most %v", gap.Round(time.Millisecond), natsRestartGap)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("nothing within a minute of the NATS restart")
	}
}

// writeRetrying publishes ev until the restarted server stores it and
// returns when that was.
func writeRetrying(t *testing.T, bus events.Publisher, ev changes.Event) time.Time {
	t.Helper()
	data, err := changes.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err := bus.Publish(ctx, events.Event{Subject: changes.Subject(ev.Branch), MsgID: changes.MsgID(ev.Transaction), Data: data})
		cancel()
		if err == nil {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish after the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// privateNATS is an in-process nats-server with JetStream on disk.
type privateNATS struct {
	opts server.Options
	srv  *server.Server
	url  string
}

func startPrivateNATS(t *testing.T) *privateNATS {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	n := &privateNATS{opts: server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true}, url: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	n.start(t)
	t.Cleanup(func() {
		if n.srv != nil {
			n.srv.Shutdown()
			n.srv.WaitForShutdown()
		}
	})
	return n
}

func (n *privateNATS) start(t *testing.T) {
	t.Helper()
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	n.srv = srv
}

// restart shuts the server down, runs down (nil: nothing) and starts it
// again on the same port and store directory.
func (n *privateNATS) restart(t *testing.T, down func()) {
	t.Helper()
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
	if down != nil {
		down()
	}
	n.start(t)
}

// TestSubscriptionAcrossNATSRestartWithIndexer is
// TestSubscriptionAcrossNATSRestart with the index fed by a consumer of
// the same server, as the indexer does (ConsumeBatch, durable, default
// options), that is applying a batch when NATS goes down: its ack is
// lost with the server, and the subscription gets nothing until the
// indexer has that batch again (after the ack wait) and has applied the
// writes after it.
func TestSubscriptionAcrossNATSRestartWithIndexer(t *testing.T) {
	// Nothing of the hub, the clients (reconnecting across the restart) or
	// the private server runs on once they are closed.
	testenv.CheckGoroutines(t)
	srv := startPrivateNATS(t)
	hubBus, err := natsjs.Connect(t.Context(), srv.url, natsjs.Options{Name: "live-hub"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hubBus.Close() })
	ixBus, err := natsjs.Connect(t.Context(), srv.url, natsjs.Options{Name: "live-indexer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ixBus.Close() })
	pub, err := natsjs.Connect(t.Context(), srv.url, natsjs.Options{Name: "live-writer",
		NATSOptions: []nats.Option{nats.ReconnectWait(20 * time.Millisecond), nats.ReconnectJitter(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() })

	idx := newIndex()
	entered, release := make(chan struct{}), make(chan struct{})
	ictx, stopIndexer := context.WithCancel(context.Background())
	indexerDone := make(chan struct{})
	go func() {
		defer close(indexerDone)
		_ = ixBus.ConsumeBatch(ictx, "indexer", changes.Subjects, func(ctx context.Context, ms []events.Msg) (int, error) {
			var top int64
			for _, m := range ms {
				ev, err := changes.Parse(m.Data)
				if err != nil {
					return 0, err
				}
				if ev.Transaction == 2 && m.NumDelivered == 1 {
					close(entered)
					<-release // NATS goes down while the batch is applied
				}
				top = max(top, ev.Transaction)
			}
			idx.set(max(top, idx.version()))
			return len(ms), nil
		})
	}()
	t.Cleanup(func() { stopIndexer(); <-indexerDone })

	h := startHub(t, hubBus, idx, livechanges.Config{})
	sub, err := h.Subscribe(t.Context(), livechanges.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, pub, changes.Event{Branch: 4, Transaction: 1, Kind: changes.KindCreated, ObjectIDs: []int64{10}})
	if ev := next(t, sub); ev.Transaction != 1 {
		t.Fatalf("before the restart: got %d", ev.Transaction)
	}
	publish(t, pub, changes.Event{Branch: 4, Transaction: 2, Kind: changes.KindUpdated, ObjectIDs: []int64{10}})
	<-entered
	srv.restart(t, func() { close(release) })
	restarted := time.Now()
	written := writeRetrying(t, pub, changes.Event{Branch: 4, Transaction: 3, Kind: changes.KindUpdated, ObjectIDs: []int64{10}})
	var first time.Duration
	for want := int64(2); want <= 3; want++ {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				t.Fatalf("subscription closed across the restart: %v", sub.Err())
			}
			if first == 0 {
				first = time.Since(restarted)
			}
			if ev.Transaction != want {
				t.Fatalf("after the restart: got %d, want %d", ev.Transaction, want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("change %d not within a minute of the NATS restart", want)
		}
	}
	gap := time.Since(restarted)
	t.Logf("after the NATS restart: first change %v, the change written after it %v (%v after the write)",
		first.Round(time.Millisecond), gap.Round(time.Millisecond), time.Since(written).Round(time.Millisecond))
	if gap > natsRestartGap {
		t.Errorf("change written after the NATS restart received %v after it, want at most %v", gap.Round(time.Millisecond), natsRestartGap)
	}
}
