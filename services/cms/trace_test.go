package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// jaegerTrace is a trace as Jaeger's query API (/api/traces/{id}) answers it.
type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// jaegerSpan is one span of a jaegerTrace.
type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	StartTime     int64  `json:"startTime"` // µs since the epoch
	Duration      int64  `json:"duration"`  // µs
	References    []struct {
		RefType string `json:"refType"` // CHILD_OF (the parent), FOLLOWS_FROM (a link)
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
}

// TestTraceEndToEnd sends one write through a distributed setup (`cms serve
// --target=management` and `--target=indexer` as processes of their own, on
// PostgreSQL, NATS, Elasticsearch and Redis) exporting traces over OTLP to a
// real Jaeger, and reads the write's trace back from Jaeger's query API: one
// trace, with the edge's HTTP span, the gRPC call, the store transaction, the
// outbox relay, the NATS publish and receive, the indexer's batch (linked to
// the event's span) and the search engine's Bulk, across both processes.
func TestTraceEndToEnd(t *testing.T) {
	otlp := testenv.URL(t, testenv.OTLPURL)
	query := strings.TrimRight(testenv.URL(t, testenv.JaegerQueryURL), "/")
	env := distributedEnv(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	otel := func(service string) []string {
		return append(slices.Clone(env), "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp, "OTEL_SERVICE_NAME="+service,
			"OTEL_TRACES_SAMPLER=parentbased_always_on", "OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SDK_DISABLED=false")
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	mgmtService, indexerService := "cms-management-"+run, "cms-indexer-"+run
	mgmt := startCommand(t, bin, t.TempDir(), []string{"serve", "--target=management"}, otel(mgmtService)...)
	startCommand(t, bin, t.TempDir(), []string{"serve", "--target=indexer"}, otel(indexerService)...)

	api := mgmt.base + "/apis/cms/v1/branches/4/objects"
	// Each write under a trace of the test's own: the platform honours the
	// caller's traceparent, so the trace id is known before the answer.
	write := func(body string) (traceID, parentID string, created int64) {
		var tid [16]byte
		var sid [8]byte
		_, _ = rand.Read(tid[:])
		_, _ = rand.Read(sid[:])
		traceID, parentID = hex.EncodeToString(tid[:]), hex.EncodeToString(sid[:])
		code, b, err := call(http.DefaultClient, http.MethodPost, api, body, "Traceparent", "00-"+traceID+"-"+parentID+"-01")
		var w writeAnswer
		if err != nil || code != http.StatusCreated || json.Unmarshal(b, &w) != nil || len(w.CreatedObjectIDs) != 1 {
			t.Fatalf("write %s = %d %v: %s", body, code, err, b)
		}
		return traceID, parentID, w.CreatedObjectIDs[0]
	}
	// wait reads trace id from Jaeger until it has every span of want (by
	// name as findSpan matches it, and the service that records it).
	wait := func(id string, want [][2]string) jaegerTrace {
		var tr jaegerTrace
		var missing []string
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			tr, missing = jaegerGet(t, query, id), nil
			for _, w := range want {
				if findSpan(tr, w[0], w[1]) < 0 {
					missing = append(missing, w[0]+" ("+w[1]+")")
				}
			}
			if len(missing) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(missing) > 0 {
			t.Fatalf("trace %s in Jaeger lacks %q after 60s; it has:\n%s", id, missing, describeTrace(tr))
		}
		return tr
	}

	// The type first, until the indexer has applied it, so that the traced
	// write is a batch of its own.
	typeTrace, _, typeID := write(`{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"tracedtype"}}]}`)
	wait(typeTrace, [][2]string{{"indexer.batch|indexer.batched", indexerService}})

	traceID, callerSpan, _ := write(fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s]}]}`, typeID, value(1000, 201, "Traced")))
	tr := wait(traceID, [][2]string{
		{"POST /apis/cms/v1/branches/4/objects", mgmtService},
		{"/cms.management.", mgmtService},
		{"store.commit", mgmtService},
		{"outbox.publish ", mgmtService},
		{"nats publish ", mgmtService},
		{"nats receive ", indexerService},
		{"indexer.batch", indexerService},
		{"search Bulk", indexerService},
	})

	// The batch is the consumer of the NATS message: a child of the publish
	// span, which it also links to (the event's own span). Jaeger keeps one
	// reference per span it points to, the link (FOLLOWS_FROM), so the
	// parent shows as that reference.
	pub := tr.Spans[findSpan(tr, "nats publish ", mgmtService)]
	batch := tr.Spans[findSpan(tr, "indexer.batch", indexerService)]
	linked := false
	for _, r := range batch.References {
		linked = linked || (r.RefType == "FOLLOWS_FROM" && r.SpanID == pub.SpanID && r.TraceID == traceID)
		if r.SpanID != pub.SpanID {
			t.Errorf("indexer.batch refers to %s/%s, which is not the NATS publish span %s", r.TraceID, r.SpanID, pub.SpanID)
		}
	}
	if !linked {
		t.Errorf("indexer.batch references %+v: want a link to the NATS publish span %s", batch.References, pub.SpanID)
	}
	// Every span of the trace hangs under the caller's span or another span
	// of the trace: nothing was cut off into a trace of its own.
	ids := map[string]bool{callerSpan: true}
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
	}
	for _, s := range tr.Spans {
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" && (r.TraceID != traceID || !ids[r.SpanID]) {
				t.Errorf("span %s has parent %s/%s outside the trace", s.OperationName, r.TraceID, r.SpanID)
			}
		}
	}
	t.Logf("trace %s: %d spans in Jaeger:\n%s", traceID, len(tr.Spans), describeTrace(tr))
}

// jaegerGet reads trace id from Jaeger's query API; an empty trace while
// Jaeger does not know it yet.
func jaegerGet(t *testing.T, query, id string) jaegerTrace {
	t.Helper()
	resp, err := http.Get(query + "/api/traces/" + id)
	if err != nil {
		t.Fatalf("Jaeger query API: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return jaegerTrace{}
	}
	var out struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Jaeger /api/traces/%s = %d: %v", id, resp.StatusCode, err)
	}
	if len(out.Data) != 1 {
		if len(out.Data) == 0 {
			return jaegerTrace{}
		}
		t.Fatalf("Jaeger answers %d traces for id %s", len(out.Data), id)
	}
	return out.Data[0]
}

// findSpan returns the index of the first span of tr named name (or, when
// name ends in a space or a dot, starting with it; "a|b" is a or b)
// recorded by service, or -1.
func findSpan(tr jaegerTrace, name, service string) int {
	for i, s := range tr.Spans {
		if tr.Processes[s.ProcessID].ServiceName != service {
			continue
		}
		for _, n := range strings.Split(name, "|") {
			if s.OperationName == n || (strings.HasSuffix(n, " ") || strings.HasSuffix(n, ".")) && strings.HasPrefix(s.OperationName, n) {
				return i
			}
		}
	}
	return -1
}

// describeTrace lists tr's spans in start order: offset from the first, duration, service and name.
func describeTrace(tr jaegerTrace) string {
	spans := slices.Clone(tr.Spans)
	slices.SortFunc(spans, func(a, b jaegerSpan) int {
		return int(a.StartTime - b.StartTime)
	})
	var sb strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&sb, "  +%7.1fms %7.1fms  %-24s %s\n", float64(s.StartTime-spans[0].StartTime)/1000,
			float64(s.Duration)/1000, tr.Processes[s.ProcessID].ServiceName, s.OperationName)
	}
	return sb.String()
}
