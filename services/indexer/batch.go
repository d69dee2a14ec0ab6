package indexer

import (
	"context"
	"errors"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// handleBatch is the events.BatchHandler: it applies a batch of change
// events with indexwriter.ApplyBatch and acknowledges them together. Events
// are handled one at a time (handle, with the retry and park policy of
// single events, each acknowledged before the next is tried) when the
// batch is one event, when ApplyBatch failed on the events of an earlier
// delivery of this batch, when one of them is malformed, or when the first
// has come back twice without this process seeing it end (a crash loop:
// the events are retried one by one so that only the one that crashes is
// parked). Its first redelivery (a killed process's batch, acks lost in a
// NATS restart) is applied as a batch again: one by one, a backlog of a
// dozen events took several seconds more to become visible.
func (s *Service) handleBatch(ctx context.Context, ms []events.Msg) (n int, err error) {
	ctx, span, others := batchSpan(ctx, ms)
	defer func() {
		tracing.End(span, err)
		for _, o := range others {
			tracing.End(o, err)
		}
	}()
	s.observe(ms)
	s.mu.Lock()
	// Only the first message can be the one a crashed process was
	// handling: the others count as seen (see handle).
	for _, m := range ms[1:] {
		if _, ok := s.tries[m.Sequence]; !ok {
			s.tries[m.Sequence] = tries{seen: int(m.NumDelivered) - 1}
		}
	}
	oneByOne := len(ms) == 1 || ms[0].Sequence <= s.oneByOneUntil || ms[0].NumDelivered > 2
	if oneByOne {
		s.oneByOneUntil = max(s.oneByOneUntil, ms[len(ms)-1].Sequence)
	}
	s.mu.Unlock()
	if !oneByOne {
		n, err := s.applyBatch(ctx, ms)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return 0, err
		}
		s.log.Warn("indexer: batch failed, applying its events one by one", "events", len(ms),
			"first", ms[0].Sequence, "err", err)
		s.mu.Lock()
		s.oneByOneUntil = max(s.oneByOneUntil, ms[len(ms)-1].Sequence)
		s.mu.Unlock()
	}
	if err := s.handle(ctx, ms[0]); err != nil {
		return 0, err
	}
	s.caughtUpTo(ms[:1], ms)
	return 1, nil
}

// batchSpan starts the "indexer.batch" consumer span of a delivered batch:
// a child of the first event's span (the publisher's, whose context the
// message headers carry), linked to the span of every event of the batch.
// Each other event of a recorded trace gets an "indexer.batched" span in
// its own trace, linked to the batch span and ended with it, so every
// write's trace shows when it became searchable.
func batchSpan(ctx context.Context, ms []events.Msg) (context.Context, trace.Span, []trace.Span) {
	ctx, span := tracing.Start(tracing.Extract(ctx, ms[0].Headers), "indexer.batch", trace.SpanKindConsumer)
	if !span.IsRecording() {
		return ctx, span, nil // tracing off or not sampled: nothing to gather
	}
	span.SetAttributes(attribute.Int("messaging.batch.message_count", len(ms)))
	var others []trace.Span
	first := span.SpanContext().TraceID()
	for _, m := range ms {
		sc := tracing.SpanContextOf(m.Headers)
		if !sc.IsValid() {
			continue
		}
		seq := attribute.Int64("messaging.nats.sequence", int64(m.Sequence)) //nolint:gosec // a stream sequence fits
		span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{seq}})
		if sc.TraceID() != first && sc.IsSampled() {
			_, o := tracing.StartWith(trace.ContextWithRemoteSpanContext(context.Background(), sc), "indexer.batched",
				trace.SpanKindConsumer, trace.WithLinks(trace.Link{SpanContext: span.SpanContext()}), trace.WithAttributes(seq))
			others = append(others, o)
		}
	}
	return ctx, span, others
}

// errMalformedInBatch: a payload of the batch is not a change event; the
// one-by-one path drops it.
var errMalformedInBatch = errors.New("indexer: malformed change event in batch")

// applyBatch applies ms with one ApplyBatch.
func (s *Service) applyBatch(ctx context.Context, ms []events.Msg) (int, error) {
	evs := make([]changes.Event, len(ms))
	for i, m := range ms {
		ev, err := changes.Parse(m.Data)
		if err != nil {
			return 0, errMalformedInBatch
		}
		evs[i] = ev
	}
	start := time.Now()
	res, err := s.ix.ApplyBatch(ctx, evs)
	s.applyNanos.Add(int64(time.Since(start)))
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		s.forget(m.Sequence)
	}
	s.applied.Add(int64(len(ms)))
	s.batches.Add(1)
	s.recovered(ctx)
	s.caughtUpTo(ms, ms)
	s.log.Debug("indexer: applied batch", "events", len(ms), "first", ms[0].Sequence, "ops", res.Ops,
		"stale", res.Stale, "branches", res.Branches, "took", time.Since(start))
	return len(ms), nil
}
