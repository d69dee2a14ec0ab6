package eventstest

import (
	"context"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// slowAckWait is the AckWait of testSlowHandlerKeepsMessages; its handler
// takes slowHandling, several times longer. (The deadline is extended
// every quarter of it: a process stalled for three quarters, 375 ms,
// would see a spurious redelivery.)
const (
	slowAckWait  = 500 * time.Millisecond
	slowHandling = 3 * slowAckWait
)

// testSlowHandlerKeepsMessages: AckWait bounds how long a dead consumer
// holds its messages, not how long a handler may take. While a handler
// (of Consume, or of ConsumeBatch) works several AckWaits on a message,
// the server must not hand it to another consumer of the same durable (a
// second replica of the process), so it is handled once.
func testSlowHandlerKeepsMessages(t *testing.T, s *suite) {
	s.publishN(1, 2)
	got := make(chan events.Msg, 100)
	started := make(chan struct{})
	consume := func() {
		ctx, cancel := context.WithCancel(s.t.Context())
		done := make(chan error, 1)
		go func() {
			done <- s.bus.Consume(ctx, "slow", "", func(_ context.Context, m events.Msg) error {
				got <- m
				if m.MsgID == "1" && m.NumDelivered == 1 {
					close(started)
					time.Sleep(slowHandling) // the slow work
				}
				return nil
			}, events.WithAckWait(slowAckWait))
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	consume()
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("no delivery")
	}
	consume() // the second replica
	var ms []events.Msg
	for len(ms) < 2 {
		ms = append(ms, receive(t, got, nil, "Consume", "delivery"))
	}
	select {
	case m := <-got:
		ms = append(ms, m)
	case <-time.After(2 * slowAckWait):
	}
	if g := ids(ms); g != "1#1 2#1" {
		t.Fatalf("Consume with a handler slower than AckWait and a second consumer: deliveries %s, want 1#1 2#1", g)
	}

	calls := make(chan []events.Msg, 100)
	startedBatch := make(chan struct{})
	consumeBatch := func() {
		ctx, cancel := context.WithCancel(s.t.Context())
		done := make(chan error, 1)
		go func() {
			done <- s.bus.ConsumeBatch(ctx, "slowbatch", "", func(_ context.Context, ms []events.Msg) (int, error) {
				calls <- append([]events.Msg(nil), ms...)
				if ms[0].MsgID == "1" && ms[0].NumDelivered == 1 {
					close(startedBatch)
					time.Sleep(slowHandling)
				}
				return len(ms), nil
			}, events.WithAckWait(slowAckWait))
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	consumeBatch()
	select {
	case <-startedBatch:
	case <-time.After(waitTimeout):
		t.Fatal("no batch")
	}
	consumeBatch()
	ms = nil
	for len(ms) < 2 {
		ms = append(ms, receive(t, calls, nil, "ConsumeBatch", "handler call")...)
	}
	select {
	case more := <-calls:
		ms = append(ms, more...)
	case <-time.After(2 * slowAckWait):
	}
	if g := ids(ms); g != "1#1 2#1" {
		t.Fatalf("ConsumeBatch with a handler slower than AckWait and a second consumer: deliveries %s, want 1#1 2#1", g)
	}
}
