package app

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// discard is a span exporter that drops what it is given: the sampled mode
// pays for making, batching and handing over every span, not for a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracingOverhead measures what tracing costs on the cached read
// path (a Delivery GET answered by the HTTP response cache, through the edge,
// as the deployed system serves it) against a baseline in the same run: the
// same request with tracing off (OpenTelemetry's no-op provider, the default
// without OTEL_* settings). "sampling off" is tracing on with a sampler that
// samples nothing (spans are made but not recorded, as
// OTEL_TRACES_SAMPLER_ARG=0 does); "sampled" records and batches every span to
// an exporter that drops them. The three modes alternate request by request on
// one server (the global tracer provider is switched between requests), so
// the machine's load affects them alike; the figures are medians over rounds
// of 200 requests per mode. overhead-off-% is the target (≤ 5 %).
func BenchmarkTracingOverhead(b *testing.B) {
	base := benchServerWith(b, TargetAll, func(*Config) {})
	root := strings.TrimSuffix(base, "/apis/cms/v1")
	benchPost(b, base+"/branches/4/objects", []byte(`{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"tracedRead"},`+
		`"values":[{"attribute":1000,"language":201,"variant":0,"value":"Read"}]}]}`))
	url := root + "/delivery/api/branches/4/objects/tracedRead"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	// fetch reads the object once.
	fetch := func() (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.SetBasicAuth("admin", "test-password")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, body
	}
	get := func() {
		if code, body := fetch(); code != http.StatusOK {
			b.Fatalf("GET %s = %d: %s", url, code, body)
		}
	}
	// Visible, then kept by the HTTP cache.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, body := fetch()
		if code == http.StatusOK && strings.Contains(string(body), `"displayName":"Read"`) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the object is not in Delivery after 20s: %d %s", code, body)
		}
	}

	off := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	sampled := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	prev := otel.GetTracerProvider()
	// set makes tp the global provider (OpenTelemetry logs a complaint when
	// given the one it has).
	set := func(tp trace.TracerProvider) {
		if otel.GetTracerProvider() != tp {
			otel.SetTracerProvider(tp)
		}
	}
	b.Cleanup(func() {
		set(prev)
		_ = off.Shutdown(context.Background())
		_ = sampled.Shutdown(context.Background())
	})
	modes := []trace.TracerProvider{noop.NewTracerProvider(), off, sampled}
	for _, m := range modes { // warm every mode's path
		set(m)
		for range 50 {
			get()
		}
	}

	const round = 200
	var rounds [3][]float64 // ns per request, per mode and round
	var sum [3]time.Duration
	var cur [3]time.Duration
	n, total := 0, 0
	for b.Loop() {
		for i, m := range modes {
			set(m)
			t0 := time.Now()
			get()
			d := time.Since(t0)
			cur[i] += d
			sum[i] += d
		}
		n++
		total++
		if n == round {
			for i := range modes {
				rounds[i] = append(rounds[i], float64(cur[i].Nanoseconds())/round)
				cur[i] = 0
			}
			n = 0
		}
	}
	set(prev)
	per := func(i int) float64 {
		if len(rounds[i]) == 0 { // fewer than one round: the mean of all
			return float64(sum[i].Nanoseconds()) / float64(max(total, 1))
		}
		return median(rounds[i])
	}
	ratio := func(i int) float64 {
		if len(rounds[i]) == 0 {
			return 100 * (per(i)/per(0) - 1)
		}
		rs := make([]float64, len(rounds[i]))
		for r := range rs {
			rs[r] = 100 * (rounds[i][r]/rounds[0][r] - 1)
		}
		return median(rs)
	}
	b.ReportMetric(per(0), "base-ns/get")
	b.ReportMetric(per(1), "sampling-off-ns/get")
	b.ReportMetric(per(2), "sampled-ns/get")
	b.ReportMetric(ratio(1), "overhead-off-%")
	b.ReportMetric(ratio(2), "overhead-sampled-%")
	b.ReportMetric(float64(len(rounds[0])), "rounds")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
