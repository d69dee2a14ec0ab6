package delivery_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/search"
)

// TestReadPool: at most the pool's workers run reads at once; the others
// wait and start in the order they came; one that finds no worker within the wait runs on its
// caller's goroutine, and so does one beyond the queue, at once; a panic
// reaches the caller; without workers every
// read runs on its caller.
func TestReadPool(t *testing.T) {
	const workers = 2
	p := delivery.NewReadPool(workers, 8, 5*time.Second)
	var running, most atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var order []int
	started := make(chan int, 16)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Run(context.Background(), func(context.Context) {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				started <- i
				<-release
				running.Add(-1)
			})
		}()
		if i < workers {
			<-started // the first ones hold the workers
		} else {
			time.Sleep(20 * time.Millisecond) // the others queue in this order
		}
	}
	for range 6 - workers {
		release <- struct{}{}
		<-started
	}
	close(release)
	wg.Wait()
	if most.Load() != workers {
		t.Errorf("%d reads ran at once, the pool has %d workers", most.Load(), workers)
	}
	for i, v := range order {
		if v != i {
			t.Errorf("reads started in the order %v, they came 0 to 5", order)
			break
		}
	}

	// No worker within the wait: the read runs on its caller.
	short := delivery.NewReadPool(1, 8, 30*time.Millisecond)
	hold, held := make(chan struct{}), make(chan struct{})
	go short.Run(context.Background(), func(context.Context) { close(held); <-hold })
	<-held
	start := time.Now()
	ran := false
	short.Run(context.Background(), func(context.Context) { ran = true })
	if !ran || time.Since(start) < 30*time.Millisecond {
		t.Errorf("with the worker busy the read ran %v after %v, want on the caller after the wait", ran, time.Since(start))
	}
	// No queue: a read that finds the worker busy runs on its caller at
	// once.
	none := delivery.NewReadPool(1, 0, time.Minute)
	busy := make(chan struct{})
	go none.Run(context.Background(), func(context.Context) { close(busy); <-hold })
	<-busy
	start = time.Now()
	ran = false
	none.Run(context.Background(), func(context.Context) { ran = true })
	if !ran || time.Since(start) > time.Second {
		t.Errorf("a pool without a queue: the read ran %v after %v, want on the caller at once", ran, time.Since(start))
	}
	close(hold)

	defer func() {
		if v := recover(); v != "boom" {
			t.Errorf("the caller recovered %v, want the read's panic", v)
		}
		var none *delivery.ReadPool
		called := false
		none.Run(context.Background(), func(context.Context) { called = true })
		if !called || delivery.NewReadPool(0, 8, time.Second) != nil {
			t.Error("a pool without workers does not run reads on their callers")
		}
	}()
	p.Run(context.Background(), func(context.Context) { panic("boom") })
	t.Error("the read's panic did not reach its caller")
}

// holdEngine runs each Search until release is closed.
type holdEngine struct {
	search.Engine
	started chan struct{}
	release chan struct{}
}

func (h *holdEngine) Search(context.Context, search.SearchRequest) (search.SearchResult, error) {
	h.started <- struct{}{}
	<-h.release
	return search.SearchResult{}, nil
}

// TestReadPoolOneWait: a read waits at most the pool's wait in all, at
// the pool and in the engine's queue (search.QueryLimit, with the same
// wait) together. One that found no worker in time goes on on its
// caller's goroutine with what is left of it (nothing: it takes a free
// slot of the engine or is refused at once with ErrOverloaded), not with
// a second wait; one that waited part of it for a worker waits only the
// rest for the engine.
func TestReadPoolOneWait(t *testing.T) {
	const wait = 400 * time.Millisecond
	setup := func(t *testing.T) (*delivery.ReadPool, search.Engine, *holdEngine) {
		h := &holdEngine{started: make(chan struct{}, 4), release: make(chan struct{})}
		t.Cleanup(func() { close(h.release) })
		return delivery.NewReadPool(1, 8, wait), search.WithQueryLimit(h, search.QueryLimit{Concurrent: 1, Queue: 8, MaxWait: wait}), h
	}
	query := func(ctx context.Context, eng search.Engine) error {
		_, err := eng.Search(ctx, search.SearchRequest{})
		return err
	}
	t.Run("no worker in time", func(t *testing.T) {
		p, eng, h := setup(t)
		go p.Run(context.Background(), func(ctx context.Context) { _ = query(ctx, eng) }) // the worker and the slot
		<-h.started
		start := time.Now()
		var err error
		p.Run(context.Background(), func(ctx context.Context) { err = query(ctx, eng) })
		d := time.Since(start)
		if !errors.Is(err, search.ErrOverloaded) {
			t.Fatalf("the read with no worker and no slot: %v, want ErrOverloaded", err)
		}
		if d < wait || d > wait*3/2 { // without the shared wait: 2 × wait
			t.Errorf("it was refused after %v, want the wait (%v) once, not at the pool and then in the engine's queue", d, wait)
		}
	})
	t.Run("worker late", func(t *testing.T) {
		p, eng, h := setup(t)
		go func() { _ = query(context.Background(), eng) }() // the slot, outside the pool
		<-h.started
		free := make(chan struct{})
		go p.Run(context.Background(), func(context.Context) { <-free }) // the worker
		time.Sleep(10 * time.Millisecond)
		start := time.Now()
		time.AfterFunc(wait/2, func() { close(free) })
		var err error
		p.Run(context.Background(), func(ctx context.Context) { err = query(ctx, eng) })
		d := time.Since(start)
		if !errors.Is(err, search.ErrOverloaded) {
			t.Fatalf("the read with a late worker and no slot: %v, want ErrOverloaded", err)
		}
		if d < wait || d > wait*5/4 { // without the shared wait: 1.5 × wait
			t.Errorf("it was refused after %v, want the wait (%v) in all", d, wait)
		}
	})
}
