// Package loadtest is a small load driver: N concurrent workers run a
// weighted mix of operations (each a func(ctx) error, usually one HTTP
// request) for a duration or a request count, after an optional warm-up,
// and the run is summarised per operation and overall: requests, errors,
// throughput and exact latency percentiles (p50, p90, p99, max) computed
// from every recorded duration.
//
// The mix is deterministic: request number i runs the operation at
// position i of a smooth weighted round-robin schedule, so with
// weights 3 and 1 every 4 consecutive requests hold 3 of the first and
// 1 of the second, whatever the number of workers. While it runs, Run
// writes a progress line every second (Config.ProgressEvery) to
// Config.Progress. Subpackage cmsload holds the CMS workload used by
// `cms load` and the in-process benchmark.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNoOps is returned by Run when no operation has a positive weight.
var ErrNoOps = errors.New("loadtest: no operation with a positive weight")

// ErrNoLimit is returned by Run when neither Duration nor Requests is set.
var ErrNoLimit = errors.New("loadtest: set a duration or a request count")

// Op is one kind of request in the mix.
type Op struct {
	Name   string
	Weight int
	// Do performs one request; a non-nil error counts as a failed request.
	Do func(ctx context.Context) error
}

// Config tells Run how hard and how long to drive the operations.
type Config struct {
	// Concurrency is the number of workers (default 1).
	Concurrency int
	// Duration of the measured phase; when Requests is also set, the run
	// ends at whichever limit comes first.
	Duration time.Duration
	// Requests caps the number of measured requests.
	Requests int64
	// Warmup runs the same mix for this long first; its results are discarded.
	Warmup time.Duration
	// Progress receives a line every ProgressEvery (default 1 s); nil = silent.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Label prefixes the progress lines (default "load").
	Label string
}

// Run drives ops with cfg and returns the report of the measured phase.
// Requests in flight when the duration ends are completed and counted.
// When ctx is cancelled Run stops early and returns the report so far
// together with ctx.Err(); failures caused by the cancellation are not
// counted.
func Run(ctx context.Context, cfg Config, ops []Op) (*Report, error) {
	sched := schedule(ops)
	if len(sched) == 0 {
		return nil, ErrNoOps
	}
	if cfg.Duration <= 0 && cfg.Requests <= 0 {
		return nil, ErrNoLimit
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = time.Second
	}
	if cfg.Label == "" {
		cfg.Label = "load"
	}
	if cfg.Warmup > 0 {
		if _, err := phase(ctx, cfg, cfg.Label+" warm-up", ops, sched, cfg.Warmup, 0); err != nil {
			return nil, err
		}
	}
	rep, err := phase(ctx, cfg, cfg.Label, ops, sched, cfg.Duration, cfg.Requests)
	if rep != nil {
		rep.Concurrency = cfg.Concurrency
	}
	return rep, err
}

// recorder is one worker's results, merged after the phase.
type recorder struct {
	durs   [][]time.Duration // per op
	errs   []int64
	sample []error // first error per op
}

// phase runs one timed (or counted) phase.
func phase(ctx context.Context, cfg Config, label string, ops []Op, sched []int, d time.Duration, limit int64) (*Report, error) {
	var (
		next   atomic.Int64 // request tickets
		done   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	start := time.Now()
	var deadline time.Time
	if d > 0 {
		deadline = start.Add(d)
	}
	recs := make([]*recorder, cfg.Concurrency)
	for w := range recs {
		rec := &recorder{durs: make([][]time.Duration, len(ops)), errs: make([]int64, len(ops)), sample: make([]error, len(ops))}
		recs[w] = rec
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					return
				}
				i := next.Add(1) - 1
				if limit > 0 && i >= limit {
					return
				}
				op := sched[i%int64(len(sched))]
				t0 := time.Now()
				err := ops[op].Do(ctx)
				el := time.Since(t0)
				if err != nil && ctx.Err() != nil {
					return // cancelled: not the system's failure
				}
				rec.durs[op] = append(rec.durs[op], el)
				if err != nil {
					rec.errs[op]++
					if rec.sample[op] == nil {
						rec.sample[op] = err
					}
					failed.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	stop := make(chan struct{})
	var pw sync.WaitGroup
	if cfg.Progress != nil {
		pw.Add(1)
		go func() {
			defer pw.Done()
			progress(cfg.Progress, label, cfg.ProgressEvery, start, &done, &failed, stop)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	pw.Wait()
	return merge(ops, recs, elapsed), ctx.Err()
}

// progress prints "label   3s  1234 req  0 err  411 req/s (now 420)" every tick.
func progress(w io.Writer, label string, every time.Duration, start time.Time, done, failed *atomic.Int64, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last int64
	lastAt := start
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			n := done.Load()
			el := now.Sub(start)
			fmt.Fprintf(w, "%s %5.1fs %8d req %5d err %8.0f req/s (now %.0f)\n", label, el.Seconds(), n, failed.Load(),
				float64(n)/el.Seconds(), float64(n-last)/now.Sub(lastAt).Seconds())
			last, lastAt = n, now
		}
	}
}

// merge folds the workers' recorders into a Report.
func merge(ops []Op, recs []*recorder, elapsed time.Duration) *Report {
	rep := &Report{Elapsed: elapsed}
	var all []time.Duration
	var allErrs int64
	for o, op := range ops {
		if op.Weight <= 0 || op.Do == nil {
			continue
		}
		var durs []time.Duration
		var errs int64
		var sample error
		for _, r := range recs {
			durs = append(durs, r.durs[o]...)
			errs += r.errs[o]
			if sample == nil {
				sample = r.sample[o]
			}
		}
		all = append(all, durs...)
		allErrs += errs
		rep.Ops = append(rep.Ops, Summarize(op.Name, durs, errs, elapsed, sample))
	}
	rep.Total = Summarize("total", all, allErrs, elapsed, nil)
	return rep
}

// schedule returns one cycle of op indexes in smooth weighted round-robin
// order (nginx's algorithm): each op appears Weight times, spread evenly.
func schedule(ops []Op) []int {
	total := 0
	for _, op := range ops {
		if op.Weight > 0 && op.Do != nil {
			total += op.Weight
		}
	}
	cur := make([]int, len(ops))
	out := make([]int, 0, total)
	for range total {
		best := -1
		for i, op := range ops {
			if op.Weight <= 0 || op.Do == nil {
				continue
			}
			cur[i] += op.Weight
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, best)
	}
	return out
}
