package natsjs_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/eventstest"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

func TestEmbedded(t *testing.T) {
	eventstest.Run(t, func(t *testing.T, stream events.StreamConfig) events.Bus {
		b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

func TestExternal(t *testing.T) {
	url := testenv.URL(t, testenv.NATSURL)
	eventstest.Run(t, func(t *testing.T, stream events.StreamConfig) events.Bus {
		b, err := natsjs.Connect(t.Context(), url, natsjs.Options{Stream: stream, Name: "eventstest"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = b.Close()
			deleteStream(t, url, b.JetStreamName())
		})
		return b
	})
}

// deleteStream removes a test stream from the shared server on its own
// connection (the suite may have closed the bus).
func deleteStream(t *testing.T, url, name string) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Errorf("cleanup connect: %v", err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("cleanup delete stream %s: %v", name, err)
	}
}

// TestEmbeddedSurvivesRestart checks what the embedded mode adds: stored
// events and consumer positions are on disk and survive a server restart.
func TestEmbeddedSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	open := func() *natsjs.Bus {
		b, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := open()
	if got := b.Stream().Name; got != events.DefaultStreamName {
		t.Errorf("default stream = %s", got)
	}
	for i := 1; i <= 4; i++ {
		e := events.Event{Subject: fmt.Sprintf("cms.changes.objects.%d", i), MsgID: fmt.Sprint(i), Data: []byte("x")}
		if err := b.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// Ack the first two, then stop.
	cctx, cancel := context.WithCancel(ctx)
	n := 0
	err := b.Consume(cctx, "indexer", "cms.changes.>", func(context.Context, events.Msg) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("Consume = %v after %d messages", err, n)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	b = open()
	defer b.Close()
	// Duplicate window survives too: republishing 4 stores nothing.
	if err := b.Publish(ctx, events.Event{Subject: "cms.changes.objects.4", MsgID: "4"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = b.Consume(cctx, "indexer", "cms.changes.>", func(_ context.Context, m events.Msg) error {
		got = append(got, m.MsgID)
		if len(got) == 2 {
			// Give a wrongly stored duplicate time to arrive.
			time.AfterFunc(300*time.Millisecond, cancel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("after restart got %v, want [3 4]", got)
	}
}

func TestEmbeddedListen(t *testing.T) {
	b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url := b.ClientURL()
	if url == "" {
		t.Fatal("no client URL")
	}
	// A second process-like client reaches the same stream over TCP.
	c, err := natsjs.Connect(t.Context(), url, natsjs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Publish(t.Context(), events.Event{Subject: "cms.changes.x", MsgID: "1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := ""
	_ = b.Consume(ctx, "d", "", func(_ context.Context, m events.Msg) error {
		got = m.MsgID
		cancel()
		return nil
	})
	if got != "1" {
		t.Fatalf("embedded consumer got %q from TCP publisher", got)
	}
}

// TestEphemeralAbandonedIsDeleted: a process that dies without removing its
// ephemeral consumer (here: its connection is cut, so the delete on return
// fails) leaves nothing behind: the server deletes the consumer after its
// inactive threshold.
func TestEphemeralAbandonedIsDeleted(t *testing.T) {
	srv, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	proc, err := natsjs.Connect(t.Context(), srv.ClientURL(), natsjs.Options{Name: "doomed"})
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	const threshold = time.Second
	done := make(chan error, 1)
	go func() {
		done <- proc.Consume(t.Context(), "cache", "", func(context.Context, events.Msg) error { return nil },
			events.WithEphemeral(), events.WithInactiveThreshold(threshold))
	}()
	names := func() []string {
		n, err := srv.ConsumerNames(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(names()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("ephemeral consumer not created: %v", names())
		}
		time.Sleep(20 * time.Millisecond)
	}
	proc.Conn().Close() // the process "dies"
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Consume on a cut connection returned nil")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Consume did not return after its connection was cut")
	}
	if n := names(); len(n) != 1 {
		t.Fatalf("consumers right after the crash = %v, want the abandoned one still there", n)
	}
	cut := time.Now()
	for len(names()) != 0 {
		if time.Since(cut) > threshold+10*time.Second {
			t.Fatalf("abandoned consumer still there after %v: %v", time.Since(cut), names())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("abandoned ephemeral consumer deleted by the server %v after the crash (threshold %v)", time.Since(cut).Round(time.Millisecond), threshold)
}

// TestEphemeralSurvivesServerRestart: an ephemeral consumer lives in the
// server's memory; when the server restarts, the client recreates it at the
// next undelivered event, so events published meanwhile are not lost.
func TestEphemeralSurvivesServerRestart(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func() *natsjs.Bus {
		b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: dir, Listen: addr})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	srv := start()
	proc, err := natsjs.Connect(t.Context(), srv.ClientURL(), natsjs.Options{Name: "reader",
		NATSOptions: []nats.Option{nats.ReconnectWait(50 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	got := make(chan string, 10)
	go func() {
		_ = proc.Consume(t.Context(), "cache", "", func(_ context.Context, m events.Msg) error {
			got <- m.MsgID
			return nil
		}, events.WithEphemeral())
	}()
	waitNames := func(b *natsjs.Bus, n int) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			names, err := b.ConsumerNames(t.Context())
			if err == nil && len(names) == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("consumers = %v (%v), want %d", names, err, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitNames(srv, 1)
	expect := func(want string) {
		t.Helper()
		select {
		case id := <-got:
			if id != want {
				t.Fatalf("got %s, want %s", id, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s not delivered", want)
		}
	}
	if err := srv.Publish(t.Context(), events.Event{Subject: "cms.changes.4", MsgID: "1"}); err != nil {
		t.Fatal(err)
	}
	expect("1")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv = start()
	defer srv.Close()
	// Published before the reader is back: still delivered.
	if err := srv.Publish(t.Context(), events.Event{Subject: "cms.changes.4", MsgID: "2"}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	expect("2")
	t.Logf("recovered %v after the restart", time.Since(began).Round(time.Millisecond))
	if err := srv.Publish(t.Context(), events.Event{Subject: "cms.changes.4", MsgID: "3"}); err != nil {
		t.Fatal(err)
	}
	expect("3")
	// The reader goes first, so it can delete its consumer.
	if err := proc.Close(); err != nil {
		t.Fatal(err)
	}
	waitNames(srv, 0)
}

func TestInvalidNamespace(t *testing.T) {
	_, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Stream: events.StreamConfig{Namespace: "a.b"}})
	if err == nil {
		t.Fatal("namespace with a dot accepted")
	}
}

// TestConsumeBatchOrderAfterCrash: a consumer process crashes holding a
// batch (neither acked nor nak'ed: it comes back after AckWait); the next
// consumer with the same durable name must not be handed the messages
// published meanwhile before those of the crashed batch, or a handler
// recording its progress (the indexer's version) records it past changes
// it has not applied.
func TestConsumeBatchOrderAfterCrash(t *testing.T) {
	srv, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	publish := func(from, to int) {
		for i := from; i <= to; i++ {
			if err := srv.Publish(t.Context(), events.Event{Subject: "cms.changes.x", MsgID: fmt.Sprint(i), Data: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ackWait = 500 * time.Millisecond
	publish(1, 10)
	first, err := natsjs.Connect(t.Context(), srv.ClientURL(), natsjs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx1, cancel1 := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel1()
	crashed := make(chan struct{})
	done1 := make(chan error, 1)
	go func() {
		done1 <- first.ConsumeBatch(ctx1, "d", "", func(ctx context.Context, ms []events.Msg) (int, error) {
			first.Conn().Close() // crash holding the batch
			close(crashed)
			<-ctx.Done()
			return 0, ctx.Err()
		}, events.WithAckWait(ackWait))
	}()
	select {
	case <-crashed:
	case <-ctx1.Done():
		t.Fatal("first consumer got nothing")
	}
	cancel1()
	<-done1
	_ = first.Close()
	publish(11, 20)

	second, err := natsjs.Connect(t.Context(), srv.ClientURL(), natsjs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	ctx2, cancel2 := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel2()
	var order []uint64
	seen := map[uint64]bool{}
	_ = second.ConsumeBatch(ctx2, "d", "", func(_ context.Context, ms []events.Msg) (int, error) {
		for _, m := range ms {
			order = append(order, m.Sequence)
			seen[m.Sequence] = true
		}
		if len(seen) == 20 {
			cancel2()
		}
		return len(ms), nil
	}, events.WithAckWait(ackWait))
	if len(seen) != 20 {
		t.Fatalf("second consumer got %d of 20 messages: %v", len(seen), order)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Fatalf("messages handed over out of stream order after a crash: %v", order)
		}
	}
}

// TestEmbeddedMaxMemory: the embedded server's JetStream memory storage
// is bounded by MaxMemory (the server's own default is three quarters of
// the machine's memory), and a stream in memory beyond it is refused.
func TestEmbeddedMaxMemory(t *testing.T) {
	const maxMemory = 8 << 20
	bus, err := natsjs.NewEmbedded(context.Background(), natsjs.EmbeddedConfig{Dir: t.TempDir(), MaxMemory: maxMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	if got := bus.Server().JetStreamConfig().MaxMemory; got != maxMemory {
		t.Fatalf("JetStream memory storage bound = %d, want %d", got, maxMemory)
	}
	_, err = bus.JetStream().CreateStream(context.Background(), jetstream.StreamConfig{Name: "MEM", Subjects: []string{"mem.>"},
		Storage: jetstream.MemoryStorage, MaxBytes: 2 * maxMemory})
	if err == nil {
		t.Fatal("a memory stream of twice MaxMemory was created")
	}
}
