package app

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/tracing/tracingtest"
)

// exemplar matches a bucket line of the gRPC latency histogram with an
// exemplar, in OpenMetrics: `…_bucket{…} 3 # {trace_id="…"} 0.0042 …`.
var exemplar = regexp.MustCompile(`(?m)^cms_grpc_call_duration_seconds_bucket\{[^}]*\} \S+ # \{trace_id="([0-9a-f]{32})"\}`)

// TestLatencyExemplars: a sampled call's trace id is an exemplar of the gRPC
// latency histogram, served when the scraper asks for OpenMetrics; the plain
// text format (what a scraper without exemplar storage asks for) has none and
// is still the default.
func TestLatencyExemplars(t *testing.T) {
	exp := tracingtest.Record(t)
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	admin.create(obj(0, "exemplarType", v(1000, 201, "Exemplar")))

	traces := map[string]bool{}
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "/cms.") {
			traces[s.SpanContext.TraceID().String()] = true
		}
	}
	if len(traces) == 0 {
		t.Fatal("no gRPC server span was recorded")
	}

	get := func(accept string) (string, string) {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics (Accept %q) = %d: %s", accept, resp.StatusCode, b)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}

	ctype, body := get("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	if !strings.HasPrefix(ctype, "application/openmetrics-text") {
		t.Fatalf("asked for OpenMetrics, got Content-Type %q", ctype)
	}
	found := exemplar.FindAllStringSubmatch(body, -1)
	if len(found) == 0 {
		t.Fatalf("no exemplar on cms_grpc_call_duration_seconds:\n%s", grepLines(body, "cms_grpc_call_duration_seconds_bucket"))
	}
	for _, m := range found {
		if !traces[m[1]] {
			t.Errorf("exemplar trace id %s is not one of the recorded calls' traces %v", m[1], traces)
		}
	}

	ctype, body = get("")
	if !strings.HasPrefix(ctype, "text/plain") {
		t.Errorf("default Content-Type %q, want the text format", ctype)
	}
	if !strings.Contains(body, "cms_grpc_call_duration_seconds_bucket") || strings.Contains(body, "trace_id=") {
		t.Errorf("text format: want the histogram without exemplars:\n%s", grepLines(body, "cms_grpc_call_duration_seconds_bucket"))
	}
}
