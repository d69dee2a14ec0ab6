package search

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
)

// blockingEngine answers Search once release is closed.
type blockingEngine struct {
	Engine
	started chan struct{}
	release chan struct{}
}

func (b *blockingEngine) Search(context.Context, SearchRequest) (SearchResult, error) {
	b.started <- struct{}{}
	<-b.release
	return SearchResult{Total: 1}, nil
}

// One query runs, one waits, the next is refused at once as unavailable
// (503); a waiting query gives up with its context; once the running one
// ends the waiting one runs.
func TestQueryLimit(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 4), release: make(chan struct{})}
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 1}).(*limitEngine)
	ctx := context.Background()
	done := make(chan error, 2)
	go func() { _, err := e.Search(ctx, SearchRequest{}); done <- err }()
	<-b.started
	go func() { _, err := e.Search(ctx, SearchRequest{}); done <- err }()
	for deadline := time.Now().Add(5 * time.Second); e.waiting.Load() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the second query does not wait")
		}
		time.Sleep(time.Millisecond)
	}
	_, err := e.Search(ctx, SearchRequest{})
	var ue *component.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrOverloaded) || !errors.Is(err, component.ErrUnavailable) {
		t.Fatalf("third query: %v, want an unavailable ErrOverloaded", err)
	}
	if _, err := e.Count(ctx, "x", nil); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("count beyond the queue: %v", err)
	}
	close(b.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.started); n != 1 { // the queued one ran after the first
		t.Fatalf("%d more queries started, want 1", n)
	}
}

// A waiting query gives up when its context ends.
func TestQueryLimitContext(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(b.release)
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 5})
	go func() { _, _ = e.Search(context.Background(), SearchRequest{}) }()
	<-b.started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := e.Search(ctx, SearchRequest{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting query: %v, want its deadline", err)
	}
}

// No limit leaves the engine as it is.
func TestQueryLimitOff(t *testing.T) {
	b := &blockingEngine{}
	if e := WithQueryLimit(b, QueryLimit{}); e != Engine(b) {
		t.Fatal("engine wrapped without a limit")
	}
}

// The queue is sized by time: with queries taking 10 ms and one slot, a
// query is admitted while its expected wait stays within MaxWait (100 ms:
// the 10th waiter expects 95 ms) whatever the fixed bound Queue allows,
// and refused at once beyond it, counted as shed.
func TestQueryLimitQueueSizedByWait(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 16), release: make(chan struct{})}
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 1000, MaxWait: 100 * time.Millisecond}).(*limitEngine)
	e.mean.Store(int64(10 * time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 16)
	go func() { _, err := e.Search(ctx, SearchRequest{}); done <- err }()
	<-b.started
	for i := range 10 {
		go func() { _, err := e.Search(ctx, SearchRequest{}); done <- err }()
		for deadline := time.Now().Add(5 * time.Second); e.waiting.Load() != int64(i+1); {
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d was not admitted (%d waiting)", i+1, e.waiting.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	start := time.Now()
	if _, err := e.Search(ctx, SearchRequest{}); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("11th waiter (expected wait 105 ms > 100 ms): %v, want ErrOverloaded", err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("the refusal took %v: it waited", d)
	}
	if s := e.QueryLimitStats(); s.Shed != 1 || s.Waiting != 10 || s.MeanQuery != 10*time.Millisecond {
		t.Errorf("stats %+v, want 1 shed, 10 waiting, mean 10ms", s)
	}
	cancel() // the waiters give up with their context, not as shed
	close(b.release)
	for range 11 {
		<-done
	}
	if s := e.QueryLimitStats(); s.Shed != 1 {
		t.Errorf("%d shed after the waiters' context ended, want 1", s.Shed)
	}
}

// An admitted query waits at most MaxWait, then it is shed.
func TestQueryLimitWaitBound(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(b.release)
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 10, MaxWait: 50 * time.Millisecond})
	go func() { _, _ = e.Search(context.Background(), SearchRequest{}) }()
	<-b.started
	start := time.Now()
	_, err := e.Get(context.Background(), "x", "1")
	if !errors.Is(err, ErrOverloaded) || !errors.Is(err, component.ErrUnavailable) {
		t.Fatalf("a query waiting past MaxWait: %v, want an unavailable ErrOverloaded", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("it gave up after %v, want MaxWait (50ms)", d)
	}
}

// queueUp starts n queries on e that wait for a slot, and waits until
// they do.
func queueUp(t *testing.T, e *limitEngine, n int, done chan<- error) {
	t.Helper()
	want := e.waiting.Load() + int64(n)
	for range n {
		go func() { _, err := e.Search(context.Background(), SearchRequest{}); done <- err }()
	}
	for deadline := time.Now().Add(5 * time.Second); e.waiting.Load() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, want %d", e.waiting.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// After one slow query, queries that each hold the slot a moment are not
// refused because of it: the expected wait is the interval between
// releases while queries waited (here well under a millisecond), not the
// mean query time the slow one raised (300 ms, then some 20 ms after 20
// quick ones, which predicted more than MaxWait from the 48th waiter on).
func TestQueryLimitWaitFollowsReleases(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 128), release: make(chan struct{})}
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 1000, MaxWait: time.Second}).(*limitEngine)
	done := make(chan error, 128)
	search := func() { _, err := e.Search(context.Background(), SearchRequest{}); done <- err }
	go search()
	<-b.started
	queueUp(t, e, 20, done)
	time.Sleep(300 * time.Millisecond) // the slow query
	for i := range 21 {
		b.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if i < 20 {
			<-b.started // the next waiter runs
		}
	}
	go search()
	<-b.started
	for i := range 60 {
		go search()
		select {
		case err := <-done:
			t.Fatalf("waiter %d (%v expected from the releases, mean query time %v): %v", i+1,
				e.expectedWait(int64(i)), time.Duration(e.mean.Load()), err)
		default:
		}
		waitFor(t, "waiter", func() bool { return e.waiting.Load() == int64(i+1) || len(done) > 0 })
		if len(done) > 0 {
			t.Fatalf("waiter %d (%v expected from the releases, mean query time %v): %v", i+1,
				e.expectedWait(int64(i)), time.Duration(e.mean.Load()), <-done)
		}
	}
	close(b.release)
	for range 61 {
		if err := <-done; err != nil {
			t.Errorf("after the release: %v", err)
		}
	}
	if s := e.QueryLimitStats(); s.Shed != 0 || s.Interval <= 0 || s.Interval > 10*time.Millisecond {
		t.Errorf("stats %+v, want none shed and an interval under 10ms", s)
	}
}

// Releases 40 ms apart while queries wait: a waiter is refused at once
// when one interval per query ahead of it and for itself exceeds MaxWait
// (200 ms): the fifth or so.
func TestQueryLimitSlowReleasesShed(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 64), release: make(chan struct{})}
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 1000, MaxWait: 200 * time.Millisecond}).(*limitEngine)
	done := make(chan error, 64)
	search := func() { _, err := e.Search(context.Background(), SearchRequest{}); done <- err }
	go search()
	<-b.started
	queueUp(t, e, 2, done)
	for range 5 {
		time.Sleep(40 * time.Millisecond)
		b.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		<-b.started
		go search()
		waitFor(t, "refilled queue", func() bool { return e.waiting.Load() == 2 || len(done) > 0 })
		if len(done) > 0 {
			t.Fatalf("the queue of 2 refused a query: %v (interval %v)", <-done, e.QueryLimitStats().Interval)
		}
	}
	iv := e.QueryLimitStats().Interval
	if iv < 35*time.Millisecond || iv > 150*time.Millisecond {
		t.Fatalf("interval %v after releases 40 ms apart", iv)
	}
	ahead := int64(2)
	for ; ahead < 10; ahead++ {
		go search()
		waitFor(t, "admission or refusal", func() bool { return e.waiting.Load() == ahead+1 || len(done) > 0 })
		if len(done) > 0 {
			if err := <-done; !errors.Is(err, ErrOverloaded) {
				t.Fatalf("waiter with %d ahead: %v, want ErrOverloaded", ahead, err)
			}
			break // refused at once
		}
	}
	close(b.release)
	for range ahead + 1 {
		<-done
	}
	if want := int64(200*time.Millisecond/iv) - 1; ahead != want && ahead != want+1 {
		t.Errorf("refused with %d ahead, interval %v: want %d", ahead, iv, want)
	}
}

// The queries of one read share its queue deadline (WithQueueDeadline):
// with the slot taken, the first waits only until the deadline (not
// MaxWait), the next one, the deadline spent, is refused at once; with a
// free slot a spent deadline still runs; an earlier deadline on the
// context is kept.
func TestQueryLimitQueueDeadline(t *testing.T) {
	b := &blockingEngine{started: make(chan struct{}, 2), release: make(chan struct{})}
	e := WithQueryLimit(b, QueryLimit{Concurrent: 1, Queue: 10, MaxWait: 5 * time.Second}).(*limitEngine)
	const left = 80 * time.Millisecond
	start := time.Now()
	ctx := WithQueueDeadline(context.Background(), start.Add(left))
	if d, _ := QueueDeadline(WithQueueDeadline(ctx, start.Add(time.Hour))); !d.Equal(start.Add(left)) {
		t.Errorf("a later deadline replaced the earlier one: %v", d)
	}
	if d, _ := QueueDeadline(WithQueueDeadline(ctx, start.Add(time.Millisecond))); !d.Equal(start.Add(time.Millisecond)) {
		t.Errorf("an earlier deadline was not kept: %v", d)
	}
	running := make(chan error, 1)
	go func() { _, err := e.Search(context.Background(), SearchRequest{}); running <- err }()
	<-b.started
	if _, err := e.Get(ctx, "x", "1"); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("first query of the read: %v, want ErrOverloaded", err)
	}
	if d := time.Since(start); d < left || d > 2*time.Second {
		t.Errorf("the first query gave up after %v, want the read's deadline (%v), not MaxWait", d, left)
	}
	again := time.Now()
	if _, err := e.Count(ctx, "x", nil); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("second query of the read: %v, want ErrOverloaded", err)
	}
	if d := time.Since(again); d > 40*time.Millisecond {
		t.Errorf("the second query waited %v with the read's wait spent", d)
	}
	close(b.release)
	if err := <-running; err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search(ctx, SearchRequest{}); err != nil {
		t.Errorf("a free slot refused a read whose wait is spent: %v", err)
	}
	if s := e.QueryLimitStats(); s.Shed != 2 {
		t.Errorf("%d shed, want 2", s.Shed)
	}
}
