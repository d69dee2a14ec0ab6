package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/store"
)

// jobsWiring opens the job queue once per process for the targets that
// use it: Management's outbox relay publishes job queue events to it
// (jobs.Route) and the jobs target's runner pulls from it.
type jobsWiring struct {
	cfg   Config
	comps *Components
	log   *slog.Logger
	queue *jobs.Queue
	// relayNotify wakes this process's outbox relay (set by the Management
	// target before the workers start; nil without it).
	relayNotify func()
}

// notifyRelay wakes the outbox relay of this process, if it has one: a
// job's writes (a release's promote) are published at once, not at the
// relay's next poll, which is up to a second away when it was idle.
func (w *jobsWiring) notifyRelay() {
	if w.relayNotify != nil {
		w.relayNotify()
	}
}

func (w *jobsWiring) open(ctx context.Context) (*jobs.Queue, error) {
	if w.queue != nil {
		return w.queue, nil
	}
	q, err := jobs.OpenQueue(ctx, w.comps.Events.JetStream(), jobs.QueueConfig{Namespace: w.comps.Events.Stream().Namespace})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	if w.cfg.Events.Engine == EngineEmbeddedNATS && w.cfg.Has(TargetJobs) {
		// The embedded server serves this process only: jobs its queue
		// still holds for a runner belong to a process that died.
		if err := q.ReleaseDead(ctx); err != nil {
			w.log.Warn("job queue: releasing the jobs of a dead runner failed; they come back after jobAckWait", "err", err)
		}
	}
	w.queue = q
	return q, nil
}

// route returns the relay's publisher: job queue events to the queue,
// change events to next.
func (w *jobsWiring) route(ctx context.Context, next events.Publisher) (events.Publisher, error) {
	q, err := w.open(ctx)
	if err != nil {
		return nil, err
	}
	return jobs.Route(q, next), nil
}

// service is the job domain over the content domain c; notify wakes the
// outbox relay after a job was queued.
func (w *jobsWiring) service(c *content.Service, notify func()) *jobs.Service {
	return jobs.New(w.comps.Store, w.comps.Blobs, c, jobs.Options{Notify: notify, Logger: w.log.With("component", "jobs"),
		Limits: jobs.Limits{MaxInputBytes: w.cfg.JobMaxInputBytes}})
}

// store is the store the runner's content domain writes through: its
// commits wake the relay as Management's do (relayNotify is set by then:
// buildTargets builds every target before any runs).
func (w *jobsWiring) store() store.Store {
	return notifyingStore{Store: w.comps.Store, notify: w.notifyRelay}
}

// runner returns the jobs target's worker: a runner with the configured
// concurrency, whose jobReindex rebuilds the index like `cms reindex`.
func (w *jobsWiring) runner(ctx context.Context, usersChanged func()) (*jobs.Runner, error) {
	q, err := w.open(ctx)
	if err != nil {
		return nil, err
	}
	if err := content.Bootstrap(ctx, w.comps.Store); err != nil {
		return nil, fmt.Errorf("bootstrap the system model: %w", err)
	}
	log := w.log.With("worker", "jobs")
	c := content.New(w.store(), log, content.WithUsersChanged(usersChanged),
		content.WithValueLimits(content.ValueLimits{MaxValueBytes: w.cfg.MaxValueBytes, MaxRequestValueBytes: w.cfg.MaxRequestValueBytes}))
	kinds := map[string]jobs.KindFunc{}
	if w.comps.Search != nil {
		ix, err := indexwriter.New(w.comps.Store, w.comps.Search, w.cfg.indexing(log))
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		kinds[jobs.KindReindex] = jobs.ReindexKind(ix, w.comps.Store.LastTransactionID)
	}
	if fs := NewFiles(w.cfg, w.comps, log); fs != nil {
		kinds[jobs.KindCleanupFiles] = jobs.CleanupFilesKind(fs, w.comps.Store, w.cfg.JobCleanupMinAge)
	}
	r := w.service(c, nil).NewRunner(q, jobs.RunnerOptions{Concurrency: w.cfg.JobConcurrency, AckWait: w.cfg.JobAckWait,
		Kinds: kinds, Logger: log})
	return r, nil
}
