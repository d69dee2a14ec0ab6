package eventstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// batchConsumer runs ConsumeBatch in the background, sending each handler
// call's messages to calls.
type batchConsumer struct {
	calls  chan []events.Msg
	cancel context.CancelFunc
	done   chan error
}

// consumeBatch starts ConsumeBatch; handle, when set, decides what each
// call returns (nil: every message handled).
func (s *suite) consumeBatch(durable string, handle func([]events.Msg) (int, error), opts ...events.ConsumeOption) *batchConsumer {
	ctx, cancel := context.WithCancel(s.t.Context())
	c := &batchConsumer{calls: make(chan []events.Msg, 1000), cancel: cancel, done: make(chan error, 1)}
	go func() {
		c.done <- s.bus.ConsumeBatch(ctx, durable, "", func(_ context.Context, ms []events.Msg) (int, error) {
			c.calls <- append([]events.Msg(nil), ms...)
			if handle != nil {
				return handle(ms)
			}
			return len(ms), nil
		}, opts...)
	}()
	s.t.Cleanup(func() { c.stop(s.t) })
	return c
}

func (c *batchConsumer) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	select {
	case err, ok := <-c.done:
		if ok {
			close(c.done)
			if err != nil {
				t.Errorf("ConsumeBatch = %v, want nil after cancel", err)
			}
		}
	case <-time.After(waitTimeout):
		t.Fatalf("ConsumeBatch did not return %v after cancel", waitTimeout)
	}
}

// next waits for one handler call.
func (c *batchConsumer) next(t *testing.T) []events.Msg {
	t.Helper()
	return receive(t, c.calls, c.done, "ConsumeBatch", "handler call")
}

// quiet fails if the handler is called within 300 ms.
func (c *batchConsumer) quiet(t *testing.T) {
	t.Helper()
	select {
	case ms := <-c.calls:
		t.Fatalf("unexpected handler call: %s", ids(ms))
	case <-time.After(300 * time.Millisecond):
	}
}

func (s *suite) publishN(from, to int) {
	for i := from; i <= to; i++ {
		s.publish(s.subject("objects.1"), fmt.Sprint(i), "")
	}
}

// testBatchPending: messages stored before the consumer starts arrive in
// publish order, in batches of at most BatchSize, several at a time; the
// acknowledged ones are not delivered again to the same durable, and a
// new message after catching up arrives on its own.
func testBatchPending(t *testing.T, s *suite) {
	s.publishN(1, 10)
	c := s.consumeBatch("batched", nil, events.WithBatchSize(4))
	var got []string
	largest := 0
	for len(got) < 10 {
		ms := c.next(t)
		if len(ms) > 4 {
			t.Fatalf("batch of %d > BatchSize 4: %s", len(ms), ids(ms))
		}
		largest = max(largest, len(ms))
		for _, m := range ms {
			got = append(got, ids([]events.Msg{m}))
		}
	}
	if g := strings.Join(got, " "); g != "1#1 2#1 3#1 4#1 5#1 6#1 7#1 8#1 9#1 10#1" {
		t.Fatalf("deliveries = %s, want 1..10 once each in order", g)
	}
	if largest < 2 {
		t.Errorf("ten pending messages arrived one per batch")
	}
	c.stop(t)
	s.publishN(11, 11)
	c2 := s.consumeBatch("batched", nil, events.WithBatchSize(4))
	if g := ids(c2.next(t)); g != "11#1" {
		t.Fatalf("after restart: %s, want 11#1 only", g)
	}
	c2.quiet(t)
}

// testBatchGathersArrivals: messages that arrive one by one while the
// handler is busy are handed over together in the next batch, not one per
// call (a consumer that has caught up, then falls behind, must batch).
func testBatchGathersArrivals(t *testing.T, s *suite) {
	release := make(chan struct{})
	first := true
	c := s.consumeBatch("arrivals", func(ms []events.Msg) (int, error) {
		if first {
			first = false
			<-release
		}
		return len(ms), nil
	}, events.WithBatchSize(32))
	s.publishN(1, 1)
	if g := ids(c.next(t)); g != "1#1" {
		t.Fatalf("first batch %s, want 1#1", g)
	}
	for i := 2; i <= 21; i++ { // each delivered before the next is published
		s.publishN(i, i)
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(release)
	var got []string
	calls := 0
	for len(got) < 20 {
		ms := c.next(t)
		calls++
		for _, m := range ms {
			got = append(got, ids([]events.Msg{m}))
		}
	}
	if g := strings.Join(got, " "); !strings.HasPrefix(g, "2#1 3#1 ") || !strings.HasSuffix(g, " 21#1") || len(got) != 20 {
		t.Fatalf("deliveries = %s, want 2..21 once each in order", g)
	}
	if calls > 2 {
		t.Errorf("20 messages that arrived while the handler was busy came in %d batches, want 1 (2 at most)", calls)
	}
}

// testBatchRetry: when the handler fails on a message, the messages before
// it are acknowledged and it is handed over again after the retry delay,
// first, with NumDelivered 2, before any later message; a handler taking a
// prefix without error gets the rest at once.
func testBatchRetry(t *testing.T, s *suite) {
	s.publishN(1, 6)
	failed := false
	start := time.Now()
	c := s.consumeBatch("retry", func(ms []events.Msg) (int, error) {
		if ms[0].MsgID == "3" && !failed {
			failed = true
			return 0, errors.New("handler failure requested by test")
		}
		return 1, nil // one at a time: the rest is handed over again
	}, events.WithBatchSize(4), events.WithRetryDelay(200*time.Millisecond))
	var firsts []string
	for len(firsts) == 0 || firsts[len(firsts)-1] != "6#1" {
		ms := c.next(t)
		if ms[0].MsgID == "3" && ms[0].NumDelivered == 2 {
			if el := time.Since(start); el < 200*time.Millisecond {
				t.Errorf("retried after %v, want the 200ms retry delay honoured", el)
			}
		}
		firsts = append(firsts, ids(ms[:1]))
	}
	if g := strings.Join(firsts, " "); g != "1#1 2#1 3#1 3#2 4#1 5#1 6#1" {
		t.Fatalf("first message of each call = %s, want 1#1 2#1 3#1 3#2 4#1 5#1 6#1", g)
	}
	c.quiet(t)
}

// testBatchStopReleases: messages of a batch not handled when ConsumeBatch
// stops reach the next consumer at once, not after AckWait (a minute
// here, longer than waitTimeout), in order.
func testBatchStopReleases(t *testing.T, s *suite) {
	s.publishN(1, 3)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	entered := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.bus.ConsumeBatch(ctx, "release", "", func(hctx context.Context, ms []events.Msg) (int, error) {
			close(entered)
			<-hctx.Done()
			return 0, hctx.Err()
		}, events.WithAckWait(time.Minute))
	}()
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("handler not called")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ConsumeBatch = %v", err)
	}
	c := s.consumeBatch("release", nil, events.WithAckWait(time.Minute))
	var got []string
	for len(got) < 3 {
		for _, m := range c.next(t) {
			got = append(got, fmt.Sprintf("%s#%d", m.MsgID, m.NumDelivered))
		}
	}
	if fmt.Sprint(got) != "[1#2 2#2 3#2]" {
		t.Fatalf("after restart got %v, want 1#2 2#2 3#2", got)
	}
}

// testBatchInvalid: ConsumeBatch rejects what Consume rejects, and
// ephemeral consumers.
func testBatchInvalid(t *testing.T, s *suite) {
	h := func(context.Context, []events.Msg) (int, error) { return 0, nil }
	for name, call := range map[string]func() error{
		"no durable": func() error { return s.bus.ConsumeBatch(t.Context(), "", "", h) },
		"no handler": func() error { return s.bus.ConsumeBatch(t.Context(), "x", "", nil) },
		"ephemeral":  func() error { return s.bus.ConsumeBatch(t.Context(), "x", "", h, events.WithEphemeral()) },
	} {
		if err := call(); !errors.Is(err, events.ErrInvalidConsumer) {
			t.Errorf("%s: %v, want ErrInvalidConsumer", name, err)
		}
	}
}
