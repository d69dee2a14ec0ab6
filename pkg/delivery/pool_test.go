package delivery_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/delivery"
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
			p.Run(context.Background(), func() {
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
	go short.Run(context.Background(), func() { close(held); <-hold })
	<-held
	start := time.Now()
	ran := false
	short.Run(context.Background(), func() { ran = true })
	if !ran || time.Since(start) < 30*time.Millisecond {
		t.Errorf("with the worker busy the read ran %v after %v, want on the caller after the wait", ran, time.Since(start))
	}
	// No queue: a read that finds the worker busy runs on its caller at
	// once.
	none := delivery.NewReadPool(1, 0, time.Minute)
	busy := make(chan struct{})
	go none.Run(context.Background(), func() { close(busy); <-hold })
	<-busy
	start = time.Now()
	ran = false
	none.Run(context.Background(), func() { ran = true })
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
		none.Run(context.Background(), func() { called = true })
		if !called || delivery.NewReadPool(0, 8, time.Second) != nil {
			t.Error("a pool without workers does not run reads on their callers")
		}
	}()
	p.Run(context.Background(), func() { panic("boom") })
	t.Error("the read's panic did not reach its caller")
}
