package eventstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
)

// testDurableStartSequence: a durable consumer created with a start
// sequence begins there; an existing one keeps its position whatever start
// it is given; a deleted one (ConsumerDeleter) starts afresh.
func testDurableStartSequence(t *testing.T, s *suite) {
	subj := s.subject("objects.1")
	for i := 1; i <= 4; i++ {
		s.publish(subj, fmt.Sprint(i), "")
	}
	c := s.consume("late", "", nil, events.WithStartSequence(3))
	if g := ids(c.nextN(t, 2)); g != "3#1 4#1" {
		t.Fatalf("deliveries from sequence 3 = %s", g)
	}
	if err := c.stop(t); err != nil {
		t.Fatal(err)
	}
	s.publish(subj, "5", "")
	c = s.consume("late", "", nil, events.WithStartSequence(1))
	if g := ids(c.nextN(t, 1)); g != "5#1" {
		t.Fatalf("the existing consumer resumed with %s, want 5#1", g)
	}
	select {
	case m := <-c.msgs:
		t.Fatalf("unexpected delivery: %s#%d", m.MsgID, m.NumDelivered)
	case <-time.After(300 * time.Millisecond):
	}
	if err := c.stop(t); err != nil {
		t.Fatal(err)
	}
	del, ok := s.bus.(events.ConsumerDeleter)
	if !ok {
		t.Fatalf("%T does not implement events.ConsumerDeleter", s.bus)
	}
	for _, name := range []string{"late", "late", "never-created"} {
		if err := del.DeleteConsumer(t.Context(), name); err != nil {
			t.Fatalf("DeleteConsumer(%s): %v", name, err)
		}
	}
	c = s.consume("late", "", nil, events.WithStartSequence(4))
	if g := ids(c.nextN(t, 2)); g != "4#1 5#1" {
		t.Fatalf("the consumer created again from sequence 4 delivered %s", g)
	}
}
