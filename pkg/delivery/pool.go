package delivery

import (
	"context"
	"sync/atomic"
	"time"
)

// ReadPool runs uncached reads on a few long-lived goroutines, in the
// order they came, so that a burst of connections waits for them before
// its reads allocate and grow their stacks.
//
// Measured at 200 keep-alive connections on 2 cores (issue 26): a read
// needs just over 16 KB of stack (the HTTP server, the gateway, the
// in-process gRPC call, the response cache, the query), the garbage
// collector halves the stack of every connection that waits idle for its
// client's next request, and the next read grows it again, copying and
// adjusting some hundred frames; with 200 connections that was a copy
// every few reads (3 % of the CPU, none at 20). The reads beyond the
// engine's slots also waited twice in its queue (the version, the
// query), each wait a park and a wake-up. On the pool's goroutines the
// deep part of a read runs on stacks that stay grown, the connection's
// goroutine stays shallow, and the reads beyond the workers wait once, at
// the pool, before they start.
type ReadPool struct {
	jobs    chan *poolJob
	workers atomic.Int64
	waiting atomic.Int64
	size    int64 // workers at most
	queue   int64
	wait    time.Duration
	idle    time.Duration
}

// poolJob is one read handed to a worker; done receives what fn panicked
// with (nil when it returned).
type poolJob struct {
	fn   func()
	done chan any
}

// ReadPoolIdle is how long a worker of a ReadPool waits for the next read
// before it ends (the workers of a quiet process are gone).
const ReadPoolIdle = time.Second

// NewReadPool returns a pool of at most workers goroutines (<= 0: nil, and
// a nil pool runs every read on its caller's goroutine). At most queue
// reads wait for a worker, each at most wait (0: as long as its context
// lasts); one beyond the queue or that found no worker in time runs on
// its caller's goroutine, where the engine's own queue
// (search.QueryLimit, sized by the same settings) admits or sheds it as
// without the pool.
func NewReadPool(workers, queue int, wait time.Duration) *ReadPool {
	if workers <= 0 {
		return nil
	}
	return &ReadPool{jobs: make(chan *poolJob), size: int64(workers), queue: int64(max(queue, 0)), wait: wait,
		idle: ReadPoolIdle}
}

// Run runs fn on a worker and returns when it returned, panicking with
// what fn panicked with. Reads wait for a worker in the order they came.
func (p *ReadPool) Run(ctx context.Context, fn func()) {
	if p == nil {
		fn()
		return
	}
	j := &poolJob{fn: fn, done: make(chan any, 1)}
	if !p.hand(ctx, j) {
		fn()
		return
	}
	if v := <-j.done; v != nil {
		panic(v)
	}
}

// hand gives j to a worker: an idle one, a new one while fewer than max
// run, else the first to free up within the wait. False: none took it.
func (p *ReadPool) hand(ctx context.Context, j *poolJob) bool {
	select {
	case p.jobs <- j:
		return true
	default:
	}
	for {
		n := p.workers.Load()
		if n >= p.size {
			break
		}
		if p.workers.CompareAndSwap(n, n+1) {
			go p.work(j)
			return true
		}
	}
	if p.waiting.Add(1) > p.queue {
		p.waiting.Add(-1)
		return false
	}
	defer p.waiting.Add(-1)
	var timeout <-chan time.Time
	if p.wait > 0 {
		t := time.NewTimer(p.wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case p.jobs <- j: // blocked senders are served in order
		return true
	case <-timeout:
	case <-ctx.Done():
	}
	return false
}

// work runs j, then the next jobs, until none came for p.idle.
func (p *ReadPool) work(j *poolJob) {
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	for {
		j.done <- p.run(j.fn)
		idle.Reset(p.idle)
		select {
		case j = <-p.jobs:
		case <-idle.C:
			p.workers.Add(-1)
			// A job handed over between the timeout and the count's
			// decrement waits for a worker a new caller starts, or
			// runs on its own goroutine at the end of its wait.
			return
		}
	}
}

// run calls fn and returns what it panicked with.
func (p *ReadPool) run(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}
