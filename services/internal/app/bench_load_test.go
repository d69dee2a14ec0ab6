package app

import (
	"context"
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
