package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// QueueSubject is the subject of job queue events in the outbox. It is
// outside the change stream's subjects: Route sends it to the job queue.
const QueueSubject = "cmsjobs.run"

// queueStream is the JetStream stream of the job queue (work-queue
// retention: a message is gone once a runner acknowledged it).
const queueStream = "CMS_JOBS"

// queued is the payload of a queue message.
type queued struct {
	Job    int64 `json:"job"`
	Queued int   `json:"queued"`
}

// enqueue appends the queue event of job j's current round to the outbox
// of tx: it becomes a queue message only if tx commits. Its message id
// makes a republished event (relay crash) a duplicate the stream drops.
func enqueue(ctx context.Context, tx store.Tx, j Job) error {
	payload, _ := json.Marshal(queued{Job: j.ID, Queued: j.Queued})
	return tx.AppendOutbox(ctx, store.OutboxEvent{Subject: QueueSubject,
		MsgID: fmt.Sprintf("job-%d-%d", j.ID, j.Queued), Payload: payload})
}

// Queue is the job queue on a JetStream server: a work-queue stream that
// the outbox relay publishes to (through Route) and runners pull from.
type Queue struct {
	js      jetstream.JetStream
	stream  string
	subject string
}

// QueueConfig names the queue on a server shared by installations.
type QueueConfig struct {
	// Namespace isolates installations or test runs like
	// events.StreamConfig.Namespace ("" = none).
	Namespace string
	// DuplicateWindow is how long a message id is remembered (default
	// events.DefaultDuplicateWindow).
	DuplicateWindow time.Duration
}

// OpenQueue creates or updates the queue stream on js.
func OpenQueue(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (*Queue, error) {
	q := &Queue{js: js, stream: queueStream, subject: QueueSubject}
	if cfg.Namespace != "" {
		q.stream, q.subject = cfg.Namespace+"_"+queueStream, cfg.Namespace+"."+QueueSubject
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = events.DefaultDuplicateWindow
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: q.stream, Subjects: []string{q.subject},
		Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy, Duplicates: cfg.DuplicateWindow})
	if err != nil {
		return nil, fmt.Errorf("jobs: create stream %s: %w", q.stream, err)
	}
	return q, nil
}

// Publish implements events.Publisher for queue events.
func (q *Queue) Publish(ctx context.Context, e events.Event) error {
	if e.Subject != QueueSubject {
		return fmt.Errorf("%w: subject %q is not the job queue's", events.ErrInvalidEvent, e.Subject)
	}
	msg := nats.NewMsg(q.subject)
	msg.Data = e.Data
	for k, v := range e.Headers { // the trace context of the write that queued the job
		msg.Header.Set(k, v)
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(q.stream)}
	if e.MsgID != "" {
		opts = append(opts, jetstream.WithMsgID(e.MsgID))
	}
	if _, err := q.js.PublishMsg(ctx, msg, opts...); err != nil {
		return fmt.Errorf("jobs: publish: %w", err)
	}
	return nil
}

// Pending returns how many queue messages no runner acknowledged yet.
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	s, err := q.js.Stream(ctx, q.stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Route returns a publisher that sends job queue events to q and every
// other event to next: the outbox relay publishes both through it.
func Route(q *Queue, next events.Publisher) events.Publisher {
	return router{q: q, next: next}
}

type router struct {
	q    *Queue
	next events.Publisher
}

func (r router) Publish(ctx context.Context, e events.Event) error {
	if strings.HasPrefix(e.Subject, "cmsjobs.") {
		return r.q.Publish(ctx, e)
	}
	return r.next.Publish(ctx, e)
}

// ReleaseDead makes the jobs that runners of an earlier process took but
// never acknowledged deliverable at once, instead of after the runner's
// AckWait. Only for a queue whose runners all live in this process (the
// embedded server of `cms run`), called before the runner starts: every
// pending delivery then belonged to a process that died (kill -9, OOM).
// The runner consumer is reset to its ack floor; on a work-queue stream
// acknowledged jobs are gone, so nothing finished comes again.
func (q *Queue) ReleaseDead(ctx context.Context) error {
	st, err := q.js.Stream(ctx, q.stream)
	if err != nil {
		return err
	}
	c, err := st.Consumer(ctx, RunnerDurable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	info, err := c.Info(ctx)
	if err != nil || info.NumAckPending == 0 {
		return err
	}
	_, err = st.ResetConsumer(ctx, RunnerDurable)
	return err
}
