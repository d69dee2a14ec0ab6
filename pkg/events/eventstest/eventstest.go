// Package eventstest is the conformance suite for events.Bus
// implementations. Every implementation, embedded or distributed, runs
// Run and must pass all of it.
//
// Each test gets its own stream (random name and subjects), so the suite can
// run against a shared external server without tests seeing each other.
package eventstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Factory returns a Bus on the given stream, which the factory must create.
// It registers its own cleanup (closing the bus, deleting the stream, whose
// server name is Namespace+"_"+Name when a Namespace is set); the suite
// may have closed the bus already.
type Factory func(t *testing.T, stream events.StreamConfig) events.Bus

// waitTimeout bounds every wait for a delivery.
const waitTimeout = 10 * time.Second

// Run runs the suite.
func Run(t *testing.T, factory Factory) {
	fresh := func(t *testing.T) *suite {
		suffix := randSuffix(t)
		cfg := events.StreamConfig{
			Name:     "T_" + strings.ToUpper(suffix),
			Subjects: []string{"t" + suffix + ".>"},
		}
		return &suite{t: t, bus: factory(t, cfg), prefix: "t" + suffix + ".", factory: factory, cfg: cfg, suffix: suffix}
	}
	testenv.RunCases(t, fresh, []testenv.Case[*suite]{
		{Name: "RoundTrip", Run: testRoundTrip},
		{Name: "DuplicateMsgIDStoredOnce", Run: testDedupe},
		{Name: "HandlerErrorRedelivers", Run: testRedeliver},
		{Name: "DurableResumesAfterRestart", Run: testDurableResume},
		{Name: "DurableStartSequence", Run: testDurableStartSequence},
		{Name: "StopReleasesBufferedMessages", Run: testStopReleasesBuffered},
		{Name: "OrderPerSubject", Run: testOrder},
		{Name: "SubjectFilter", Run: testFilter},
		{Name: "CancelStopsPromptly", Run: testCancel},
		{Name: "InvalidInput", Run: testInvalid},
		{Name: "Close", Run: testClose},
		{Name: "EphemeralNewEventsOnlyPerConsumer", Run: testEphemeralNewOnly},
		{Name: "EphemeralStartTime", Run: testEphemeralStartTime},
		{Name: "EphemeralGoneAfterStop", Run: testEphemeralGoneAfterStop},
		{Name: "EphemeralHandlerErrorRetries", Run: testEphemeralRetry},
		{Name: "EphemeralInvalidName", Run: testEphemeralInvalid},
		{Name: "NamespaceIsolates", Run: testNamespace},
		{Name: "BatchPendingInOrder", Run: testBatchPending},
		{Name: "BatchGathersArrivals", Run: testBatchGathersArrivals},
		{Name: "BatchHandlerFailureRetriesFirst", Run: testBatchRetry},
		{Name: "BatchStopReleasesMessages", Run: testBatchStopReleases},
		{Name: "BatchInvalidInput", Run: testBatchInvalid},
		{Name: "SlowHandlerKeepsMessages", Run: testSlowHandlerKeepsMessages},
	})
}

type suite struct {
	t      *testing.T
	bus    events.Bus
	prefix string // subject prefix covered by the stream

	// For cases that need a second bus.
	factory Factory
	cfg     events.StreamConfig
	suffix  string
}

func (s *suite) subject(tail string) string { return s.prefix + tail }

func (s *suite) publish(subject, id, data string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), waitTimeout)
	defer cancel()
	err := s.bus.Publish(ctx, events.Event{Subject: subject, MsgID: id, Data: []byte(data)})
	if err != nil {
		s.t.Fatalf("Publish(%s, %s): %v", subject, id, err)
	}
}

// consumer runs Consume in the background, sending each delivery to msgs.
type consumer struct {
	msgs   chan events.Msg
	cancel context.CancelFunc
	done   chan error
}

// consume starts Consume; fail, when set, decides per delivery whether the
// handler returns an error.
func (s *suite) consume(durable, filter string, fail func(events.Msg) bool, opts ...events.ConsumeOption) *consumer {
	ctx, cancel := context.WithCancel(s.t.Context())
	c := &consumer{msgs: make(chan events.Msg, 1000), cancel: cancel, done: make(chan error, 1)}
	go func() {
		c.done <- s.bus.Consume(ctx, durable, filter, func(_ context.Context, m events.Msg) error {
			c.msgs <- m
			if fail != nil && fail(m) {
				return errors.New("handler failure requested by test")
			}
			return nil
		}, opts...)
	}()
	s.t.Cleanup(func() { c.stop(s.t) })
	return c
}

// stop cancels the consumer and waits for Consume to return.
func (c *consumer) stop(t *testing.T) error {
	t.Helper()
	c.cancel()
	select {
	case err, ok := <-c.done:
		if ok {
			close(c.done)
		}
		return err
	case <-time.After(waitTimeout):
		t.Fatalf("Consume did not return %v after cancel", waitTimeout)
		return nil
	}
}

// next waits for one delivery.
func (c *consumer) next(t *testing.T) events.Msg {
	t.Helper()
	return receive(t, c.msgs, c.done, "Consume", "delivery")
}

// receive waits for the next value on ch; it fails the test when the
// consumer (called name) returns on done first or nothing (a what) comes
// within waitTimeout.
func receive[T any](t *testing.T, ch <-chan T, done <-chan error, name, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case err := <-done:
		t.Fatalf("%s returned early: %v", name, err)
	case <-time.After(waitTimeout):
		t.Fatalf("no %s within %v", what, waitTimeout)
	}
	var zero T
	return zero
}

// nextN waits for n deliveries.
func (c *consumer) nextN(t *testing.T, n int) []events.Msg {
	t.Helper()
	out := make([]events.Msg, 0, n)
	for range n {
		out = append(out, c.next(t))
	}
	return out
}

func ids(ms []events.Msg) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%s#%d", m.MsgID, m.NumDelivered)
	}
	return strings.Join(s, " ")
}

func randSuffix(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
