package eventstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

func testRoundTrip(t *testing.T, s *suite) {
	ctx := t.Context()
	before := time.Now().Add(-time.Minute)
	want := []events.Event{
		{Subject: s.subject("objects.1"), MsgID: "m1", Data: []byte(`{"id":1}`), Headers: map[string]string{"Cms-Kind": "object", "Cms-Branch": "1"}},
		{Subject: s.subject("objects.2"), MsgID: "m2", Data: []byte{0, 1, 2, 255}},
		{Subject: s.subject("branches.1"), MsgID: "m3"}, // empty payload
	}
	for _, e := range want {
		if err := s.bus.Publish(ctx, e); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	c := s.consume("rt", "", nil)
	got := c.nextN(t, len(want))
	var lastSeq uint64
	for i, m := range got {
		w := want[i]
		if m.Subject != w.Subject || m.MsgID != w.MsgID || !bytes.Equal(m.Data, w.Data) {
			t.Errorf("msg %d = {%s %s %q}, want {%s %s %q}", i, m.Subject, m.MsgID, m.Data, w.Subject, w.MsgID, w.Data)
		}
		for k, v := range w.Headers {
			if m.Headers[k] != v {
				t.Errorf("msg %d header %s = %q, want %q (all: %v)", i, k, m.Headers[k], v, m.Headers)
			}
		}
		if m.NumDelivered != 1 {
			t.Errorf("msg %d NumDelivered = %d, want 1", i, m.NumDelivered)
		}
		if m.Sequence <= lastSeq {
			t.Errorf("msg %d Sequence = %d, not after %d", i, m.Sequence, lastSeq)
		}
		lastSeq = m.Sequence
		if m.Published.Before(before) || m.Published.After(time.Now().Add(time.Minute)) {
			t.Errorf("msg %d Published = %v, not now", i, m.Published)
		}
	}
}

func testDedupe(t *testing.T, s *suite) {
	subj := s.subject("objects.7")
	s.publish(subj, "row-1", "first")
	s.publish(subj, "row-1", "republished") // same outbox row after a crash
	s.publish(subj, "row-2", "second")
	s.publish(subj, "row-1", "again")
	s.publish(subj, "row-3", "sentinel")
	c := s.consume("dd", "", nil)
	got := c.nextN(t, 3)
	if g := ids(got); g != "row-1#1 row-2#1 row-3#1" {
		t.Fatalf("deliveries = %s, want row-1#1 row-2#1 row-3#1", g)
	}
	if string(got[0].Data) != "first" {
		t.Errorf("stored payload = %q, want the first publication", got[0].Data)
	}
	// The sentinel came last, so no duplicate can still be on its way.
	select {
	case m := <-c.msgs:
		t.Fatalf("unexpected extra delivery %s#%d", m.MsgID, m.NumDelivered)
	case <-time.After(200 * time.Millisecond):
	}
}

func testRedeliver(t *testing.T, s *suite) {
	s.publish(s.subject("objects.1"), "a", "a")
	s.publish(s.subject("objects.1"), "b", "b")
	failed := 0
	c := s.consume("rd", "", func(m events.Msg) bool {
		if m.MsgID == "a" && failed < 2 {
			failed++
			return true
		}
		return false
	}, events.WithRetryDelay(100*time.Millisecond))
	start := time.Now()
	got := c.nextN(t, 4)
	// With the default MaxInFlight of 1 the failing message is retried
	// before b is delivered.
	if g := ids(got); g != "a#1 a#2 a#3 b#1" {
		t.Fatalf("deliveries = %s, want a#1 a#2 a#3 b#1", g)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("two retries took %v, want the 100ms retry delay honoured", el)
	}
	select {
	case m := <-c.msgs:
		t.Fatalf("acked message delivered again: %s#%d", m.MsgID, m.NumDelivered)
	case <-time.After(300 * time.Millisecond):
	}
}

func testDurableResume(t *testing.T, s *suite) {
	subj := s.subject("objects.1")
	for i := 1; i <= 3; i++ {
		s.publish(subj, fmt.Sprint(i), "")
	}
	c1 := s.consume("durable", "", nil)
	if g := ids(c1.nextN(t, 3)); g != "1#1 2#1 3#1" {
		t.Fatalf("first run deliveries = %s", g)
	}
	if err := c1.stop(t); err != nil {
		t.Fatalf("Consume after cancel = %v, want nil", err)
	}
	for i := 4; i <= 5; i++ {
		s.publish(subj, fmt.Sprint(i), "")
	}
	// The restart must not wait for AckWait (30s by default): waitTimeout is
	// shorter.
	c2 := s.consume("durable", "", nil)
	if g := ids(c2.nextN(t, 2)); g != "4#1 5#1" {
		t.Fatalf("after restart deliveries = %s, want 4#1 5#1", g)
	}
	select {
	case m := <-c2.msgs:
		t.Fatalf("unexpected delivery after restart: %s#%d", m.MsgID, m.NumDelivered)
	case <-time.After(300 * time.Millisecond):
	}
	// A different durable name starts from the beginning.
	c3 := s.consume("other", "", nil)
	if g := ids(c3.nextN(t, 5)); g != "1#1 2#1 3#1 4#1 5#1" {
		t.Fatalf("new durable deliveries = %s", g)
	}
}

// testStopReleasesBuffered: messages fetched ahead (MaxInFlight > 1) but not
// handled when Consume stops must reach the next consumer at once, not after
// AckWait (a minute here, longer than waitTimeout).
func testStopReleasesBuffered(t *testing.T, s *suite) {
	for i := 1; i <= 6; i++ {
		s.publish(s.subject("objects.1"), fmt.Sprint(i), "")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	blocked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.bus.Consume(ctx, "ahead", "", func(hctx context.Context, m events.Msg) error {
			if m.MsgID == "2" {
				close(blocked)
				<-hctx.Done()
			}
			return nil
		}, events.WithMaxInFlight(8), events.WithAckWait(time.Minute))
	}()
	select {
	case <-blocked:
	case <-time.After(waitTimeout):
		t.Fatal("handler not called")
	}
	time.Sleep(100 * time.Millisecond) // let the rest arrive in the buffer
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Consume = %v", err)
	}
	c := s.consume("ahead", "", nil, events.WithAckWait(time.Minute))
	var got []string
	for _, m := range c.nextN(t, 4) {
		got = append(got, m.MsgID)
	}
	// With MaxInFlight > 1 order across a stop is not promised: compare sets.
	slices.Sort(got)
	if fmt.Sprint(got) != "[3 4 5 6]" {
		t.Fatalf("after restart got %v, want 3 4 5 6 in any order", got)
	}
}

func testOrder(t *testing.T, s *suite) {
	const n = 50
	ctx := t.Context()
	for i := range n {
		for _, sub := range []string{"x", "y"} {
			e := events.Event{Subject: s.subject(sub), MsgID: fmt.Sprintf("%s-%d", sub, i), Data: fmt.Appendf(nil, "%d", i)}
			if err := s.bus.Publish(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := s.consume("order", "", nil, events.WithMaxInFlight(16))
	next := map[string]int{}
	for _, m := range c.nextN(t, 2*n) {
		want := fmt.Sprint(next[m.Subject])
		if string(m.Data) != want {
			t.Fatalf("subject %s: got %s, want %s", m.Subject, m.Data, want)
		}
		next[m.Subject]++
	}
}

func testFilter(t *testing.T, s *suite) {
	s.publish(s.subject("objects.1"), "o1", "")
	s.publish(s.subject("branches.1"), "b1", "")
	s.publish(s.subject("objects.2"), "o2", "")
	s.publish(s.subject("branches.2"), "b2", "")
	c := s.consume("objs", s.subject("objects.*"), nil)
	if g := ids(c.nextN(t, 2)); g != "o1#1 o2#1" {
		t.Fatalf("filtered deliveries = %s, want o1#1 o2#1", g)
	}
	select {
	case m := <-c.msgs:
		t.Fatalf("delivery outside the filter: %s", m.Subject)
	case <-time.After(300 * time.Millisecond):
	}
}

func testCancel(t *testing.T, s *suite) {
	// Idle consumer.
	c := s.consume("idle", "", nil)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := c.stop(t); err != nil {
		t.Errorf("Consume after cancel = %v, want nil", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("idle Consume took %v to stop", el)
	}

	// Consumer blocked in a handler that honours its ctx.
	s.publish(s.subject("objects.1"), "slow", "")
	ctx, cancel := context.WithCancel(t.Context())
	entered := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.bus.Consume(ctx, "busy", "", func(hctx context.Context, _ events.Msg) error {
			close(entered)
			<-hctx.Done()
			return hctx.Err()
		})
	}()
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("handler not called")
	}
	start = time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Consume after cancel = %v, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Consume did not return after cancel")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("busy Consume took %v to stop", el)
	}
	// The interrupted message was not acked: the same durable gets it again
	// promptly.
	c2 := s.consume("busy", "", nil)
	if m := c2.next(t); m.MsgID != "slow" || m.NumDelivered != 2 {
		t.Errorf("after interrupted handler got %s#%d, want slow#2", m.MsgID, m.NumDelivered)
	}
}

func testInvalid(t *testing.T, s *suite) {
	ctx := t.Context()
	for _, subj := range []string{"", "elsewhere.objects.1", s.subject("*"), s.subject(">"), s.subject("")} {
		err := s.bus.Publish(ctx, events.Event{Subject: subj, MsgID: "x"})
		if !errors.Is(err, events.ErrInvalidEvent) {
			t.Errorf("Publish(%q) = %v, want ErrInvalidEvent", subj, err)
		}
	}
	err := s.bus.Publish(ctx, events.Event{Subject: s.subject("a"), MsgID: "x", Headers: map[string]string{"Nats-Msg-Id": "y"}})
	if !errors.Is(err, events.ErrInvalidEvent) {
		t.Errorf("Publish with a Nats-Msg-Id header = %v, want ErrInvalidEvent", err)
	}
	err = s.bus.Consume(ctx, "", "", func(context.Context, events.Msg) error { return nil })
	if !errors.Is(err, events.ErrInvalidConsumer) {
		t.Errorf("Consume with empty durable = %v, want ErrInvalidConsumer", err)
	}
	err = s.bus.Consume(ctx, "bad.name", "", func(context.Context, events.Msg) error { return nil })
	if !errors.Is(err, events.ErrInvalidConsumer) {
		t.Errorf("Consume with durable %q = %v, want ErrInvalidConsumer", "bad.name", err)
	}
}

func testClose(t *testing.T, s *suite) {
	s.publish(s.subject("objects.1"), "1", "")
	c := s.consume("c", "", nil)
	c.next(t)
	if err := s.bus.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-c.done:
		if !errors.Is(err, events.ErrClosed) {
			t.Errorf("Consume after Close = %v, want ErrClosed", err)
		}
		close(c.done)
	case <-time.After(waitTimeout):
		t.Fatal("Consume did not return after Close")
	}
	if err := s.bus.Publish(t.Context(), events.Event{Subject: s.subject("objects.1")}); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if err := s.bus.Close(); !errors.Is(err, events.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// testNamespace: two buses on the same stream name and subjects but
// different namespaces do not see each other's events, consumers of the
// same name or duplicates, and both speak plain subjects.
func testNamespace(t *testing.T, s *suite) {
	cfg := s.cfg
	cfg.Namespace = "ns" + s.suffix
	other := s.factory(t, cfg)
	ctx := t.Context()
	subj := s.subject("objects.1")
	if err := other.Publish(ctx, events.Event{Subject: subj, MsgID: "same", Data: []byte("other")}); err != nil {
		t.Fatalf("Publish in a namespace: %v", err)
	}
	s.publish(subj, "same", "plain") // the same MsgID is no duplicate across namespaces
	s.publish(subj, "plain2", "plain")

	c := s.consume("reader", "", nil)
	if g := ids(c.nextN(t, 2)); g != "same#1 plain2#1" {
		t.Fatalf("plain bus deliveries = %s, want same#1 plain2#1", g)
	}
	got := make(chan events.Msg, 10)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- other.Consume(cctx, "reader", s.subject("objects.*"), func(_ context.Context, m events.Msg) error {
			got <- m
			return nil
		})
	}()
	select {
	case m := <-got:
		if m.Subject != subj || m.MsgID != "same" || string(m.Data) != "other" {
			t.Fatalf("namespaced delivery = {%s %s %q}, want {%s same \"other\"}", m.Subject, m.MsgID, m.Data, subj)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no delivery in the namespace")
	}
	select {
	case m := <-got:
		t.Fatalf("namespaced consumer got an event of the plain bus: %s %s", m.MsgID, m.Data)
	case m := <-c.msgs:
		t.Fatalf("plain consumer got more: %s %s", m.MsgID, m.Data)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("namespaced Consume = %v", err)
	}
	if l, ok := other.(events.ConsumerLister); ok {
		if names, err := l.ConsumerNames(ctx); err != nil || fmt.Sprint(names) != "[reader]" {
			t.Errorf("namespaced consumers = %v, %v; want [reader]", names, err)
		}
	}
}
