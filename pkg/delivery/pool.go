package delivery

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
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
//
// A read waits at most the pool's wait (queries.queueWait) in all: one
// that found no worker in time used to go on to the engine's queue with a
// wait of its own, so that under overload it waited up to twice as long
// (Run).
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
	ctx  context.Context
	fn   func(context.Context)
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
// without the pool, within what is left of the same wait.
func NewReadPool(workers, queue int, wait time.Duration) *ReadPool {
	if workers <= 0 {
		return nil
	}
	return &ReadPool{jobs: make(chan *poolJob), size: int64(workers), queue: int64(max(queue, 0)), wait: wait,
		idle: ReadPoolIdle}
}

// admittedKey marks the context of a read that passed a pool's gate (its
// value is the pool).
type admittedKey struct{}

// Run runs fn on a worker and returns when it returned, panicking with
// what fn panicked with. Reads wait for a worker in the order they came.
//
// One wait for the whole read: the wait starts when the read arrives
// (search.WithQueueDeadline, the pool's wait from now unless ctx has an
// earlier deadline) and fn's context carries it, so that a read that
// found no worker in time and goes on on its caller's goroutine, and
// every engine query of the read, wait only for what is left of it: a
// free slot of the engine or a refusal (ErrOverloaded: 503 with
// Retry-After), never a second queueWait. A read already through the
// gate (Run within Run's fn, over the in-process gateway too) runs at
// once: every entry point of Delivery may call Run.
func (p *ReadPool) Run(ctx context.Context, fn func(context.Context)) {
	if p == nil {
		fn(ctx)
		return
	}
	if ctx.Value(admittedKey{}) == p {
		fn(ctx)
		return
	}
	if p.wait > 0 {
		ctx = search.WithQueueDeadline(ctx, time.Now().Add(p.wait))
	}
	ctx = context.WithValue(ctx, admittedKey{}, p)
	j := &poolJob{ctx: ctx, fn: fn, done: make(chan any, 1)}
	if !p.hand(ctx, j) {
		fn(ctx)
		return
	}
	if v := <-j.done; v != nil {
		panic(v)
	}
}

// Waiting is the number of reads waiting for a worker now.
func (p *ReadPool) Waiting() int64 {
	if p == nil {
		return 0
	}
	return p.waiting.Load()
}

// hand gives j to a worker: an idle one, a new one while fewer than max
// run, else the first to free up before the read's queue deadline. False:
// none took it.
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
	d, bounded := search.QueueDeadline(ctx)
	left := time.Until(d)
	if bounded && left <= 0 {
		return false
	}
	if p.waiting.Add(1) > p.queue {
		p.waiting.Add(-1)
		return false
	}
	defer p.waiting.Add(-1)
	var timeout <-chan time.Time
	if bounded {
		t := time.NewTimer(left)
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
		j.done <- p.run(j)
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

// run calls j's fn and returns what it panicked with.
func (p *ReadPool) run(j *poolJob) (v any) {
	defer func() { v = recover() }()
	j.fn(j.ctx)
	return nil
}
