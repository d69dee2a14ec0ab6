package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	blobsfs "github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/store"
	testsetups "github.com/cmsplatform/cms/pkg/testenv/setups"
)

// env is one setup: store, bus, blobs, the job domain, its queue and a
// running outbox relay. Runners are started by the tests.
type env struct {
	st      store.Store
	bus     *natsjs.Bus
	blobs   blobs.Store
	content *content.Service
	svc     *jobs.Service
	queue   *jobs.Queue
	runners []*jobs.Runner // the runners started, in order
}

// setups runs fn on the embedded setup (SQLite, embedded NATS, file
// blobs) and the distributed one (PostgreSQL, NATS with its object
// store; skipped locally without CMS_*_URL, failing under CI).
func setups(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("embedded", func(t *testing.T) { fn(t, embedded(t)) })
	t.Run("distributed", func(t *testing.T) { fn(t, distributed(t)) })
}

func embedded(t testing.TB) *env {
	t.Helper()
	bl, err := blobsfs.New(t.TempDir(), blobsfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return start(t, testsetups.SQLiteStore(t), testsetups.EmbeddedBus(t), bl, "")
}

func distributed(t testing.TB) *env {
	t.Helper()
	st := testsetups.PostgresStore(t)
	bus, ns := testsetups.NATSBus(t, "jobtest", "jobs-test")
	// NATSBus deletes the namespace's streams when t ends: the job queue
	// (ns_CMS_JOBS) and this bucket's (OBJ_ns_blobs).
	bl, err := natsobj.New(context.Background(), bus.JetStream(), natsobj.Options{Bucket: ns + "_blobs"})
	if err != nil {
		t.Fatal(err)
	}
	return start(t, st, bus, bl, ns)
}

func start(t testing.TB, st store.Store, bus *natsjs.Bus, bl blobs.Store, ns string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.OpenQueue(ctx, bus.JetStream(), jobs.QueueConfig{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	relay := outbox.New(st, jobs.Route(q, bus), outbox.Options{Idle: 10 * time.Millisecond, MaxIdle: 50 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := content.New(st, nil)
	return &env{st: st, bus: bus, blobs: bl, content: c, queue: q,
		svc: jobs.New(st, bl, c, jobs.Options{Notify: relay.Notify, Limits: jobs.Limits{MaxInputBytes: 64 << 20}})}
}

// runner starts a runner with test timings; stop abandons its jobs
// unacknowledged, like a killed process.
func (e *env) runner(t testing.TB, name string, kinds map[string]jobs.KindFunc) (stop func()) {
	return e.runnerN(t, name, 2, kinds)
}

func (e *env) runnerN(t testing.TB, name string, concurrency int, kinds map[string]jobs.KindFunc) (stop func()) {
	return e.runnerWait(t, name, concurrency, 1500*time.Millisecond, kinds)
}

func (e *env) runnerWait(t testing.TB, name string, concurrency int, ackWait time.Duration, kinds map[string]jobs.KindFunc) (stop func()) {
	t.Helper()
	return e.runnerOpts(t, jobs.RunnerOptions{Concurrency: concurrency, AckWait: ackWait,
		CheckEvery: 50 * time.Millisecond, MetricsEvery: 50 * time.Millisecond, Instance: name, Kinds: kinds})
}

func (e *env) runnerOpts(t testing.TB, o jobs.RunnerOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := e.svc.NewRunner(e.queue, o)
	e.runners = append(e.runners, r)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitState polls job id until cond holds (at most 30s).
func (e *env) wait(t *testing.T, id int64, what string, cond func(jobs.Job) bool) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := e.svc.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d never %s: state %d (%s) %q", id, what, j.State, jobs.StateName(j.State), j.StateMessage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) waitDone(t *testing.T, id int64) jobs.Job {
	t.Helper()
	return e.wait(t, id, "finished", jobs.Job.Terminal)
}
