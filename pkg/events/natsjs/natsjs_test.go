package natsjs_test

import (
	"context"
	"errors"
	"fmt"
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
			deleteStream(t, url, stream.Name)
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
