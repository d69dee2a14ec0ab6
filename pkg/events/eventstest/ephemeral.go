package eventstest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// lister returns the bus as an events.ConsumerLister; the ephemeral cases
// need it to see the server's consumers.
func (s *suite) lister() events.ConsumerLister {
	s.t.Helper()
	l, ok := s.bus.(events.ConsumerLister)
	if !ok {
		s.t.Fatalf("%T does not implement events.ConsumerLister", s.bus)
	}
	return l
}

// ephemeralNames lists the server's consumers whose name starts with prefix.
func (s *suite) ephemeralNames(prefix string) []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), waitTimeout)
	defer cancel()
	all, err := s.lister().ConsumerNames(ctx)
	if err != nil {
		s.t.Fatalf("ConsumerNames: %v", err)
	}
	var out []string
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// waitEphemeral waits until n consumers named prefix… exist and returns them.
func (s *suite) waitEphemeral(prefix string, n int) []string {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := s.ephemeralNames(prefix)
		if len(got) == n {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("consumers %s*: %v, want %d of them", prefix, got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testEphemeralNewOnly: without a start time an ephemeral consumer skips
// what was stored before it existed, and each one with the same name gets
// every later event (one per process, unlike a shared durable).
func testEphemeralNewOnly(t *testing.T, s *suite) {
	s.publish(s.subject("objects.1"), "old", "")
	c1 := s.consume("cache", "", nil, events.WithEphemeral())
	c2 := s.consume("cache", "", nil, events.WithEphemeral())
	names := s.waitEphemeral("cache-", 2)
	if names[0] == names[1] {
		t.Fatalf("two ephemeral consumers share the name %s", names[0])
	}
	s.publish(s.subject("objects.1"), "new1", "")
	s.publish(s.subject("objects.2"), "new2", "")
	for i, c := range []*consumer{c1, c2} {
		if g := ids(c.nextN(t, 2)); g != "new1#1 new2#1" {
			t.Fatalf("consumer %d deliveries = %s, want new1#1 new2#1 (not the older event)", i+1, g)
		}
	}
	if names := s.ephemeralNames("cache"); len(names) != 2 {
		t.Fatalf("consumers = %v, want only the two ephemeral ones (no durable %q)", names, "cache")
	}
}

// testEphemeralStartTime: WithStartTime replays what was stored since.
func testEphemeralStartTime(t *testing.T, s *suite) {
	s.publish(s.subject("objects.1"), "before", "")
	time.Sleep(50 * time.Millisecond)
	since := time.Now()
	time.Sleep(50 * time.Millisecond)
	s.publish(s.subject("objects.1"), "after1", "")
	s.publish(s.subject("objects.1"), "after2", "")
	c := s.consume("since", "", nil, events.WithEphemeral(), events.WithStartTime(since))
	if g := ids(c.nextN(t, 2)); g != "after1#1 after2#1" {
		t.Fatalf("deliveries = %s, want after1#1 after2#1", g)
	}
	s.waitEphemeral("since-", 1)
	s.publish(s.subject("objects.1"), "later", "")
	if g := ids(c.nextN(t, 1)); g != "later#1" {
		t.Fatalf("then = %s, want later#1", g)
	}
}

// testEphemeralGoneAfterStop: the consumer disappears from the server as
// soon as Consume returns, whether its ctx ended or the bus was closed.
func testEphemeralGoneAfterStop(t *testing.T, s *suite) {
	c := s.consume("gone", s.subject("objects.*"), nil, events.WithEphemeral())
	s.waitEphemeral("gone-", 1)
	s.publish(s.subject("objects.1"), "1", "")
	c.next(t)
	if err := c.stop(t); err != nil {
		t.Fatalf("Consume after cancel = %v, want nil", err)
	}
	if names := s.ephemeralNames("gone"); len(names) != 0 {
		t.Fatalf("after the consumer's ctx ended the server still has %v", names)
	}

	c = s.consume("closed", "", nil, events.WithEphemeral())
	s.waitEphemeral("closed-", 1)
	done := make(chan error, 1)
	go func() { done <- s.bus.Close() }()
	select {
	case err := <-c.done:
		if !errors.Is(err, events.ErrClosed) {
			t.Errorf("ephemeral Consume after Close = %v, want ErrClosed", err)
		}
		close(c.done)
	case <-time.After(waitTimeout):
		t.Fatal("ephemeral Consume did not return after Close")
	}
	if err := <-done; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// testEphemeralRetry: a failing handler gets the same message again after
// RetryDelay, before any later one; MaxDeliver bounds the attempts.
func testEphemeralRetry(t *testing.T, s *suite) {
	c := s.consume("retry", "", func(m events.Msg) bool {
		return m.MsgID == "a" && m.NumDelivered < 3 || m.MsgID == "poison"
	}, events.WithEphemeral(), events.WithRetryDelay(100*time.Millisecond), events.WithMaxDeliver(4))
	s.waitEphemeral("retry-", 1)
	start := time.Now()
	s.publish(s.subject("objects.1"), "a", "")
	s.publish(s.subject("objects.1"), "b", "")
	if g := ids(c.nextN(t, 4)); g != "a#1 a#2 a#3 b#1" {
		t.Fatalf("deliveries = %s, want a#1 a#2 a#3 b#1", g)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("two retries took %v, want the 100ms retry delay honoured", el)
	}
	s.publish(s.subject("objects.1"), "poison", "")
	s.publish(s.subject("objects.1"), "c", "")
	if g := ids(c.nextN(t, 5)); g != "poison#1 poison#2 poison#3 poison#4 c#1" {
		t.Fatalf("deliveries = %s, want poison 4 times (MaxDeliver), then c#1", g)
	}
}

func testEphemeralInvalid(t *testing.T, s *suite) {
	h := func(context.Context, events.Msg) error { return nil }
	for _, name := range []string{"", "bad.name", "bad name"} {
		err := s.bus.Consume(t.Context(), name, "", h, events.WithEphemeral())
		if !errors.Is(err, events.ErrInvalidConsumer) {
			t.Errorf("ephemeral Consume with name %q = %v, want ErrInvalidConsumer", name, err)
		}
	}
}
