package jobs_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/tracing"
	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// TestJobRunIsInTheCreatorsTrace: a job created under a span runs as a
// span "jobs.run" of the same trace (the queue message carries the trace
// context from the outbox row to the runner).
func TestJobRunIsInTheCreatorsTrace(t *testing.T) {
	exp := tracingtest.Record(t)
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "r1", nil)
		ctx, span := tracing.Start(context.Background(), "create job", trace.SpanKindServer)
		j, err := e.svc.Create(ctx, jobs.CreateRequest{Branch: 4, Caller: &auth.Principal{Name: "editor"},
			Definition: e.def(t, jobs.KindExportJSON), Objects: []int64{201}})
		span.End()
		if err != nil {
			t.Fatal(err)
		}
		if j = e.waitDone(t, j.ID); j.State != jobs.StateSucceeded {
			t.Fatalf("job state %s: %s", jobs.StateName(j.State), j.StateMessage)
		}
		// The run's span ends right after the final state is stored.
		want := span.SpanContext().TraceID()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, s := range exp.GetSpans() {
				if s.Name == "jobs.run" && s.SpanContext.TraceID() == want {
					return
				}
			}
		}
		t.Errorf("no jobs.run span in the creator's trace %s", want)
	})
}
