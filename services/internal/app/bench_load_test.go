package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
)

// BenchmarkLoadMixed is `cms load` in-process: the whole system (`cms run`
// on embedded components) on loopback, 200 seeded objects, 8 workers
// running the default mix (60 % Delivery GET by id, half of them
// conditional; 25 % Delivery list with resolve; 10 % Index search; 5 %
// Management update) for 5 s after a 1 s warm-up; then, as the baseline
// in the same run, the same 8 workers against a bare net/http server
// answering the bytes of a Delivery GET. Reports the mix's req/s, p50 and
// p99 per operation, and ratio-% = baseline latency / Delivery GET
// latency (p50) and throughput-% = mix req/s / baseline req/s.
// One iteration takes ~13 s; b.Loop runs it once at the default benchtime.
func BenchmarkLoadMixed(b *testing.B) {
	url := strings.TrimSuffix(benchServer(b, TargetAll, Component{}), "/apis/cms/v1")
	mix, err := cmsload.ParseMix(cmsload.DefaultMix)
	if err != nil {
		b.Fatal(err)
	}
	var res *cmsload.Result
	for b.Loop() {
		res, err = cmsload.Run(context.Background(), cmsload.Options{
			Target: cmsload.Target{URL: url, User: "admin", Password: "test-password", Branch: 4},
			Mix:    mix,
			Load:   loadtest.Config{Concurrency: 8, Duration: 5 * time.Second, Warmup: time.Second},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	sys, base := res.System, res.Baseline.Total
	if rate := sys.Total.ErrorRate(); rate > 1 {
		var sb strings.Builder
		_ = sys.WriteTable(&sb)
		b.Fatalf("error rate %.2f%% > 1%%:\n%s", rate, sb.String())
	}
	b.ReportMetric(sys.Total.Throughput, "req/s")
	for _, op := range sys.Ops {
		b.ReportMetric(loadtest.Millis(op.P50), op.Name+"-p50-ms")
		b.ReportMetric(loadtest.Millis(op.P99), op.Name+"-p99-ms")
	}
	b.ReportMetric(base.Throughput, "baseline-req/s")
	if get, ok := sys.Op(cmsload.OpDeliveryGet); ok {
		b.ReportMetric(loadtest.Compare(base, get).P50, "ratio-%")
	}
	b.ReportMetric(loadtest.Compare(base, sys.Total).Throughput, "throughput-%")
}

// BenchmarkManagementWrites drives single-value PATCHes (management-write
// only) over HTTP through the whole system, with 1 and with 8 clients for
// 3 s, and reports writes/s, p50/p99 and the throughput against the bare
// net/http baseline of the same run (throughput-%).
func BenchmarkManagementWrites(b *testing.B) {
	url := strings.TrimSuffix(benchServer(b, TargetAll, Component{}), "/apis/cms/v1")
	mix := []cmsload.Weight{{Name: cmsload.OpManagementWrite, Weight: 1}}
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			var res *cmsload.Result
			var err error
			for b.Loop() {
				res, err = cmsload.Run(context.Background(), cmsload.Options{
					Target: cmsload.Target{URL: url, User: "admin", Password: "test-password", Branch: 4},
					Mix:    mix, Objects: 50,
					Load: loadtest.Config{Concurrency: clients, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond},
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			w, _ := res.System.Op(cmsload.OpManagementWrite)
			if w.Errors > 0 {
				b.Fatalf("%d of %d writes failed: %v", w.Errors, w.Requests, w.FirstError)
			}
			b.ReportMetric(w.Throughput, "writes/s")
			b.ReportMetric(loadtest.Millis(w.P50), "p50-ms")
			b.ReportMetric(loadtest.Millis(w.P99), "p99-ms")
			b.ReportMetric(loadtest.Compare(res.Baseline.Total, w).Throughput, "throughput-%")
		})
	}
}
