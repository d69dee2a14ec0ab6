package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/tracing"
)

// KindFunc runs one kind of job. It returns when the work is done (nil:
// Succeeded) or failed; it must stop promptly when ctx ends (kill).
type KindFunc func(ctx context.Context, t *Task) error

// RunnerOptions tune a Runner; zero values get the defaults.
type RunnerOptions struct {
	// Concurrency is how many jobs this runner runs at once (default 2).
	Concurrency int
	// AckWait is how long the queue waits for a sign of life of a runner
	// before it hands the job to another (default 30s). A running job
	// sends one every CheckEvery.
	AckWait time.Duration
	// CheckEvery is how often a running job's state is read (kill
	// requests), its progress and log written and its heartbeat sent
	// (default 1s; at most AckWait/3).
	CheckEvery time.Duration
	// ProgressEvery is how often, between the state checks, a running
	// job's progress and its log (while at most progressLogBytes) are
	// stored when they changed, so a short job's bar and log move while it
	// runs (default 250ms; at most CheckEvery).
	ProgressEvery time.Duration
	// MetricsEvery is how often a metric sample is taken (default 5s).
	MetricsEvery time.Duration
	// MaxAttempts bounds how often a job whose runner was lost (killed,
	// crashed) is taken over before it is failed (default 3).
	MaxAttempts int
	// RemoveExpiredEvery is how often the runner removes finished jobs
	// whose retainUntil has passed (Service.RemoveExpired; default 10m,
	// first right after the start).
	RemoveExpiredEvery time.Duration
	// Instance names this runner in CmsJob.instanceId (default
	// host-pid).
	Instance string
	// Kinds overrides or adds kinds (tests; the reindex kind is added by
	// the process that can reach the index).
	Kinds  map[string]KindFunc
	Logger *slog.Logger
}

// Runner pulls jobs from the queue and runs them.
type Runner struct {
	svc   *Service
	q     *Queue
	o     RunnerOptions
	kinds map[string]KindFunc
	log   *slog.Logger
	seq   atomic.Int64

	running, succeeded, failed atomic.Int64
}

// RunnerStats are a runner's counters: jobs running now, and jobs it
// finished since it started, by final state.
type RunnerStats struct {
	Running, Succeeded, Failed int64
}

// Stats returns the runner's counters.
func (r *Runner) Stats() RunnerStats {
	return RunnerStats{Running: r.running.Load(), Succeeded: r.succeeded.Load(), Failed: r.failed.Load()}
}

// Pending returns how many jobs of the runner's queue no runner finished
// yet (queued or running, in every process).
func (r *Runner) Pending(ctx context.Context) (uint64, error) { return r.q.Pending(ctx) }

// RunnerDurable is the queue consumer all runners share.
const RunnerDurable = "job-runner"

// NewRunner returns a runner of s's jobs from q.
func (s *Service) NewRunner(q *Queue, o RunnerOptions) *Runner {
	if o.Concurrency <= 0 {
		o.Concurrency = 2
	}
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = time.Second
	}
	o.CheckEvery = min(o.CheckEvery, o.AckWait/3)
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 250 * time.Millisecond
	}
	o.ProgressEvery = min(o.ProgressEvery, o.CheckEvery)
	if o.MetricsEvery <= 0 {
		o.MetricsEvery = 5 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.RemoveExpiredEvery <= 0 {
		o.RemoveExpiredEvery = 10 * time.Minute
	}
	if o.Instance == "" {
		host, _ := os.Hostname()
		o.Instance = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = s.log
	}
	kinds := builtinKinds()
	for k, f := range o.Kinds {
		kinds[k] = f
	}
	return &Runner{svc: s, q: q, o: o, kinds: kinds, log: o.Logger}
}

// Run pulls and runs jobs until ctx ends; running jobs are then abandoned
// unacknowledged (another runner takes them over after AckWait).
func (r *Runner) Run(ctx context.Context) error {
	cons, err := r.q.js.CreateOrUpdateConsumer(ctx, r.q.stream, jetstream.ConsumerConfig{
		Durable: RunnerDurable, AckPolicy: jetstream.AckExplicitPolicy, AckWait: r.o.AckWait,
		MaxAckPending: 10000, FilterSubject: r.q.subject,
	})
	if err != nil {
		return fmt.Errorf("jobs: runner consumer: %w", err)
	}
	slots := make(chan struct{}, r.o.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.removeExpired(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case slots <- struct{}{}:
		}
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			r.log.Warn("job queue fetch failed", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		got := false
		for m := range batch.Messages() {
			got = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				r.handle(ctx, m)
			}()
		}
		cancel()
		if !got {
			<-slots
		}
	}
}

// removeExpired calls Service.RemoveExpired every RemoveExpiredEvery
// until ctx ends.
func (r *Runner) removeExpired(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := r.svc.RemoveExpired(ctx, time.Now().UTC())
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("removing expired jobs failed; tried again later", "err", err)
		case n > 0:
			r.log.Info("expired jobs removed", "jobs", n)
		}
		sleep(ctx, r.o.RemoveExpiredEvery)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handle runs the job of one queue message and acknowledges the message
// once the job's final state is stored (or the message is stale).
func (r *Runner) handle(ctx context.Context, m jetstream.Msg) {
	var q queued
	if err := json.Unmarshal(m.Data(), &q); err != nil || q.Job <= 0 {
		r.log.Error("malformed job queue message dropped", "data", string(m.Data()))
		_ = m.Term()
		return
	}
	delivered := uint64(1)
	if md, err := m.Metadata(); err == nil {
		delivered = md.NumDelivered
	}
	instance := fmt.Sprintf("%s/%d", r.o.Instance, r.seq.Add(1))
	j, run, wait, err := r.claim(ctx, q, delivered, instance)
	if err != nil {
		r.log.Warn("job claim failed; the queue retries", "job", q.Job, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	if wait > 0 {
		// A scheduled job before its time goes back to the queue, which
		// delivers it again when it is due: no runner polls for it.
		_ = m.NakWithDelay(wait)
		return
	}
	if !run {
		_ = m.Ack()
		return
	}
	r.running.Add(1)
	// The run is a span of the trace of the request that queued the job.
	hdr := map[string]string{}
	for k := range m.Headers() {
		hdr[k] = m.Headers().Get(k)
	}
	sctx, span := tracing.Start(tracing.Extract(ctx, hdr), "jobs.run", trace.SpanKindConsumer)
	span.SetAttributes(attribute.Int64("cms.job", j.ID), attribute.Int64("cms.job.definition", j.Definition))
	err = r.execute(sctx, m, j, instance)
	tracing.End(span, err)
	r.running.Add(-1)
	if err != nil {
		// Not acknowledged: the queue hands the job out again after
		// AckWait, and the next runner takes it over or finds it done.
		r.log.Warn("job left unacknowledged", "job", j.ID, "err", err)
		return
	}
	_ = m.Ack()
}

// claim marks the job Running for instance, or says why it is not to run:
// a stale message (an older round), a finished job (a duplicate after a
// crash between the final write and the ack), a deleted or killed job. A
// job found Running was lost by its runner (the queue only redelivers
// without heartbeats): it is taken over, counting a restart, until
// MaxAttempts deliveries, then failed. A waiting job before its StartAfter
// is not claimed: wait is how long it still has to wait.
func (r *Runner) claim(ctx context.Context, q queued, delivered uint64, instance string) (Job, bool, time.Duration, error) {
	var out Job
	run := false
	var wait time.Duration
	err := r.svc.change(ctx, q.Job, "system", "run job", func(j *Job) error {
		out = *j
		if j.Queued != q.Queued || j.Terminal() {
			return errSkip
		}
		if j.State == StateNew && j.StartAfter != nil {
			// Checked on the job the claim holds, so a failed read
			// can never start it before its time.
			if wait = time.Until(*j.StartAfter); wait > 0 {
				return errSkip
			}
		}
		now := time.Now().UTC()
		switch {
		case j.State == StateKillRequest:
			j.State, j.Finished = StateError, &now
			j.StateMessage += " (its runner had stopped)"
		case j.State == StateRunning && lost(j.FirstDelivery, delivered) >= uint64(r.o.MaxAttempts):
			j.State, j.Finished = StateError, &now
			j.StateMessage = fmt.Sprintf("the job's runner stopped responding %d times; given up", lost(j.FirstDelivery, delivered))
		default:
			if j.State == StateRunning {
				j.Restarts++
				j.StateMessage = fmt.Sprintf("taken over from runner %s, which stopped responding", j.InstanceID)
			} else {
				j.FirstDelivery = delivered
			}
			j.State, j.Started, j.InstanceID, j.Progress, j.ProgressInfo = StateRunning, &now, instance, nil, ""
			run = true
		}
		out = *j
		return nil
	}, nil)
	if errors.Is(err, errSkip) || errors.Is(err, ErrNotFound) {
		return out, false, max(wait, 0), nil
	}
	return out, run, 0, err
}

var errSkip = errors.New("skip")

// lost is how many deliveries of a job's round came after the one that
// first claimed it (first; 0 in jobs stored before it was recorded, which
// were claimed on the first delivery): each means its runner was lost.
func lost(first, delivered uint64) uint64 {
	first = max(first, 1)
	if delivered <= first {
		return 0
	}
	return delivered - first
}

// execute runs j's kind with heartbeats and stores the final state.
func (r *Runner) execute(ctx context.Context, m jetstream.Msg, j Job, instance string) error {
	t := &Task{Job: j, svc: r.svc}
	if j.StateMessage != "" {
		t.Logf("%s", j.StateMessage)
	}
	def, err := r.svc.Definition(ctx, j.Branch, j.Definition)
	kind := r.kinds[def.Kind]
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	switch {
	case err != nil:
		done <- fmt.Errorf("job definition %d: %w", j.Definition, err)
	case kind == nil:
		done <- fmt.Errorf("job kind %s cannot run in this process", def.Kind)
	default:
		t.Logf("job %d (%s) started by %s on %s", j.ID, def.Kind, orUnknown(j.User), instance)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- fmt.Errorf("job kind %s panicked: %v", def.Kind, p)
				}
			}()
			done <- kind(runCtx, t)
		}()
	}
	metrics := newSampler(j.Started)
	t.addMetric(r.svc.lim.MaxMetrics, metrics.sample())
	check := time.NewTicker(r.o.CheckEvery)
	defer check.Stop()
	// Between the checks, progress (and a small log) as it changes.
	var progressC <-chan time.Time
	if r.o.ProgressEvery < r.o.CheckEvery {
		progress := time.NewTicker(r.o.ProgressEvery)
		defer progress.Stop()
		progressC = progress.C
	}
	lastSample := time.Now()
	for {
		select {
		case err := <-done:
			t.addMetric(r.svc.lim.MaxMetrics, metrics.sample())
			return r.finish(ctx, t, instance, err, context.Cause(runCtx))
		case <-ctx.Done():
			// The runner stops: the kind sees the same cancellation; give it
			// a moment to return so it does not outlive the runner.
			select {
			case err := <-done:
				if err != nil {
					r.log.Info("job stopped with its runner", "job", j.ID, "err", err)
				}
			case <-time.After(10 * time.Second):
			}
			return ctx.Err()
		case <-progressC:
			if err := r.store(ctx, t, instance, progressLogBytes); err != nil {
				r.log.Warn("job progress not stored", "job", j.ID, "err", err)
			}
		case <-check.C:
			_ = m.InProgress()
			if time.Since(lastSample) >= r.o.MetricsEvery {
				t.addMetric(r.svc.lim.MaxMetrics, metrics.sample())
				lastSample = time.Now()
			}
			cur, err := r.svc.Get(ctx, j.ID)
			switch {
			case err != nil:
				r.log.Warn("job state check failed", "job", j.ID, "err", err)
				continue
			case cur.InstanceID != instance:
				cancel(errLost)
				return errLost
			case cur.State == StateKillRequest:
				cancel(errKilled{cur.StateMessage})
			}
			if err := r.flush(ctx, t, instance); err != nil {
				r.log.Warn("job progress not stored", "job", j.ID, "err", err)
			}
		}
	}
}

var errLost = errors.New("another runner took the job over")

type errKilled struct{ why string }

func (e errKilled) Error() string { return e.why }

// progressLogBytes: a log up to this size is stored with the progress
// (every ProgressEvery); a longer one only at the state checks, so a long
// log is not rewritten several times a second.
const progressLogBytes = 256 << 10

// flush stores the log and, when changed, the progress of a running job.
func (r *Runner) flush(ctx context.Context, t *Task, instance string) error {
	return r.store(ctx, t, instance, 0)
}

// store stores what changed of a running job: its log (when logLimit is 0
// or the log is at most logLimit bytes) and its progress, artifacts and
// metrics.
func (r *Runner) store(ctx context.Context, t *Task, instance string, logLimit int) error {
	if b, ok := t.takeLog(logLimit); ok {
		if _, err := r.svc.blobs.Put(ctx, logKey(t.Job.ID), bytes.NewReader(b), blobs.Meta{ContentType: "text/plain; charset=utf-8"}); err != nil {
			return err
		}
	}
	p, info, arts, changed := t.takeProgress()
	metrics, mchanged := t.takeMetrics()
	if !changed && !mchanged {
		return nil
	}
	return r.svc.change(ctx, t.Job.ID, "system", "job progress", func(j *Job) error {
		if j.InstanceID != instance {
			return errLost
		}
		j.Progress, j.ProgressInfo, j.Artifacts, j.Metrics = p, info, arts, metrics
		return nil
	}, nil)
}

// finish writes the log and the final state: Succeeded when the kind
// returned nil, else Error with the reason (a kill request's message).
func (r *Runner) finish(ctx context.Context, t *Task, instance string, runErr, cause error) error {
	var killed errKilled
	switch {
	case errors.As(cause, &killed):
		t.Logf("killed: %s", killed.why)
	case runErr != nil:
		t.Logf("failed: %v", runErr)
	default:
		t.Logf("succeeded")
	}
	if runErr == nil && cause == nil {
		t.SetProgress(1, "done")
	}
	if err := r.flush(ctx, t, instance); err != nil {
		return err
	}
	err := r.svc.change(ctx, t.Job.ID, "system", "finish job", func(j *Job) error {
		if j.InstanceID != instance {
			return errLost
		}
		now := time.Now().UTC()
		j.Finished = &now
		switch {
		case errors.As(cause, &killed):
			j.State, j.StateMessage = StateError, killed.why
		case runErr != nil:
			j.State, j.StateMessage = StateError, runErr.Error()
		default:
			j.State = StateSucceeded
			if j.StateMessage == "" {
				j.StateMessage = "succeeded"
			}
		}
		return nil
	}, nil)
	switch {
	case err != nil:
	case runErr == nil && cause == nil:
		r.succeeded.Add(1)
	default:
		r.failed.Add(1)
	}
	return err
}
