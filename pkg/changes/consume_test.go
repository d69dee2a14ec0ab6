package changes

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// handled is one call of the test's Handler.
type handled struct {
	tx, delivered int64
	at            time.Time
}

// TestConsumer: on a real (embedded) bus, a malformed event is logged once
// and acknowledged, a failed one comes back after RetryDelay before any
// later event, Consume returns nil when its context ends, and nothing of
// the loop outlives it (goleak).
func TestConsumer(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bus, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bus.Close() }()
	publish := func(id string, payload []byte) {
		t.Helper()
		if err := bus.Publish(ctx, events.Event{Subject: Subject(4), MsgID: id, Data: payload}); err != nil {
			t.Fatal(err)
		}
	}
	event := func(tx int64) []byte {
		b, _ := Encode(Event{Branch: 4, Transaction: tx, Kind: KindUpdated, ObjectIDs: []int64{tx}})
		return b
	}
	publish("bad", []byte("{"))
	publish(MsgID(1), event(1))
	publish(MsgID(2), event(2))

	var logs testenv.Buffer
	c := Consumer{Name: "test consumer", Log: slog.New(slog.NewTextHandler(&logs, nil)), RetryDelay: 300 * time.Millisecond}
	var mu sync.Mutex
	var calls []handled
	done := make(chan struct{})
	h := func(_ context.Context, ev Event, m events.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, handled{ev.Transaction, int64(m.NumDelivered), time.Now()})
		switch {
		case ev.Transaction == 1 && m.NumDelivered == 1:
			return context.DeadlineExceeded // any error: retried
		case ev.Transaction == 2:
			close(done)
		}
		return nil
	}
	runCtx, stop := context.WithCancel(ctx)
	ended := make(chan error, 1)
	go func() { ended <- c.Consume(runCtx, bus, "kit-test", h) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the last event was not handled")
	}
	stop()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("Consume after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Consume did not return after its context ended")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 || calls[0].tx != 1 || calls[1].tx != 1 || calls[1].delivered != 2 || calls[2].tx != 2 {
		t.Fatalf("calls %+v: want event 1, event 1 again (delivery 2), event 2", calls)
	}
	if d := calls[1].at.Sub(calls[0].at); d < c.RetryDelay {
		t.Errorf("retried after %v, want at least the retry delay %v", d, c.RetryDelay)
	}
	if n := strings.Count(logs.String(), "test consumer: dropping malformed change event"); n != 1 {
		t.Errorf("%d lines for the malformed event, want 1:\n%s", n, logs.String())
	}
}

// TestConsumerQuiet: a Quiet consumer drops a malformed event without a
// line; a loud one without a logger uses the default one.
func TestConsumerQuiet(t *testing.T) {
	var logs testenv.Buffer
	m := events.Msg{Subject: Subject(4), Data: []byte(`{"branch":4}`)}
	quiet := Consumer{Name: "lane", Log: slog.New(slog.NewTextHandler(&logs, nil)), Quiet: true}
	called := false
	if err := quiet.Handler(func(context.Context, Event, events.Msg) error { called = true; return nil })(context.Background(), m); err != nil || called {
		t.Fatalf("malformed event: err %v, handler called %v", err, called)
	}
	if logs.String() != "" {
		t.Errorf("a quiet consumer logged: %s", logs.String())
	}
	prev := slog.Default()
	defer slog.SetDefault(prev)
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	if _, ok := (Consumer{Name: "loud"}).Parse(context.Background(), m); ok || !strings.Contains(logs.String(), "loud: dropping malformed change event") {
		t.Errorf("default logger: ok %v, logs %q", ok, logs.String())
	}
}

// TestStreamSubject: the event bus's default stream subject is Subjects.
func TestStreamSubject(t *testing.T) {
	if events.DefaultSubject != Subjects {
		t.Fatalf("events.DefaultSubject %q, changes.Subjects %q", events.DefaultSubject, Subjects)
	}
}
