package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/tracing"
)

// laneRestart paces a lane whose consumer ended with an error (a lost
// connection, a consumer deleted by another process).
const laneRestart = time.Second

// lane delivers the stream to one webhook through its own durable
// consumer, one event at a time: its handler runs on one goroutine.
type lane struct {
	d      *Dispatcher
	id     int64
	cancel context.CancelFunc
	done   chan struct{}

	// last is the sequence of the last event handed to the lane; seq and
	// tries count the attempts of the event in flight (the attempt number
	// of its log records).
	last, seq uint64
	tries     int
}

// alive reports whether l runs (false for nil).
func (l *lane) alive() bool {
	if l == nil {
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// run consumes until ctx ends; a consumer that does not exist yet is
// created at stream sequence start (0: by the consumer's default).
func (l *lane) run(ctx context.Context, start uint64) {
	defer close(l.done)
	for {
		opts := []events.ConsumeOption{events.WithMaxInFlight(1), events.WithAckWait(l.d.ackWait())}
		if start > 0 {
			opts = append(opts, events.WithStartSequence(start))
		}
		err := l.d.consumer(true).Consume(ctx, l.d.bus, LaneName(l.id), l.handle, opts...)
		if ctx.Err() != nil || errors.Is(err, events.ErrClosed) {
			return
		}
		l.d.cfg.Logger.Warn("webhooks: lane stopped; restarting if its webhook is still wanted", "webhook", l.id, "err", err)
		if l.last > 0 {
			// Recreated, it resumes with the event in flight (which may
			// then arrive twice: at-least-once).
			start = l.last
		}
		// Another process may have deleted the consumer because the
		// webhook is gone, now or while this lane waited: right before the
		// consumer would be created again, the store says whether it is
		// still wanted. A store that cannot answer is asked again; the
		// consumer is never created again on definitions not read.
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(laneRestart):
			}
			rerr := l.d.reload(ctx)
			if rerr == nil {
				if !l.d.isWanted(l.id) {
					return
				}
				break
			}
			l.d.cfg.Logger.Warn("webhooks: cannot read the definitions; lane waits", "webhook", l.id, "err", rerr)
		}
	}
}

// handle delivers one event to the lane's webhook: nil (acknowledged)
// when the webhook does not want it, accepted it, gave it up or its
// address was refused; else a retry after the backoff.
func (l *lane) handle(ctx context.Context, ev changes.Event, m events.Msg) error {
	d := l.d
	l.last = m.Sequence
	if ev.Branch == content.BranchDefault && slices.Contains(ev.ObjectIDs, l.id) {
		// The definition changed here: the lane does not use an older one
		// for the events after it, even ahead of the control loop.
		if err := d.reload(ctx); err != nil {
			return err
		}
	}
	def, ok := d.definition(l.id)
	if !ok || ev.Transaction < def.CreatedTx {
		return nil
	}
	var touch content.Touch
	if len(def.Types) > 0 {
		var err error
		if touch, err = content.Touched(ctx, d.st, ev); err != nil {
			return err
		}
	}
	if !def.Matches(ev, touch.Types) {
		return nil
	}
	// The first attempt in this process continues the stream's count of
	// deliveries of the event (a restart goes on counting).
	if l.seq != m.Sequence {
		l.seq, l.tries = m.Sequence, max(int(m.NumDelivered)-1, 0)
	}
	l.tries++
	now := time.Now()
	p := Payload{ID: fmt.Sprintf("%s-%d", m.MsgID, def.ID), WebHook: def.ID, Event: ev}
	body, _ := json.Marshal(p)
	// A stop lets an attempt under way finish (the client's timeout bounds
	// it): cut off after the receiver took the event, it would count as
	// failed, stay unacknowledged and be sent again after the restart.
	// The attempt is a span of the event's trace (carried in the message
	// headers from the write), and the receiver gets its traceparent.
	sctx, span := tracing.Start(tracing.Extract(ctx, m.Headers), "webhooks.deliver", trace.SpanKindClient)
	span.SetAttributes(attribute.Int64("cms.webhook", def.ID), attribute.String("cms.delivery", p.ID))
	a := d.client.Deliver(context.WithoutCancel(sctx), def.URL, def.Secret, body, p.ID, now)
	span.SetAttributes(attribute.Int("http.response.status_code", a.Status))
	tracing.End(span, a.Error())
	if d.cfg.OnAttempt != nil {
		d.cfg.OnAttempt(def.ID, ev, a)
	}
	gaveUp := !a.OK() && !a.Refused && d.cfg.Retry.GivenUp(m.Published, now)
	rec := attemptRecord(def.ID, p.ID, ev, l.tries, a, gaveUp)
	d.outcomes.count(rec.Outcome)
	d.rec.record(rec)
	switch {
	case a.OK():
		return nil
	case a.Refused:
		d.cfg.Logger.Warn("webhooks: receiver address refused; not retried", "webhook", def.ID, "event", m.MsgID, "err", a.Err)
		return nil
	case gaveUp:
		d.cfg.Logger.Warn("webhooks: giving up", "webhook", def.ID, "event", m.MsgID, "err", a.Err)
		return nil
	}
	return events.RetryAfter(errors.New(a.Err), d.cfg.Retry.Backoff(int(m.NumDelivered), a.RetryAfter))
}
