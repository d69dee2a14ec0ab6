package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
)

// BenchmarkWriteVisibility is `cms load --write-rate 200 --duration 60s`
// against `cms run` in its own process (embedded components, as a laptop
// or a single-node deployment runs it): 200 single-value PATCHes per
// second, each timed until Delivery serves its transaction
// (X-Cms-Min-Version). It reports the writes answered per second, the
// write latency and the write → visible p50/p99 (issue target: p99 ≤
// 500 ms), and visible/write = visible p50 / write p50 of the same run.
func BenchmarkWriteVisibility(b *testing.B) {
	bin, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p := startCMS(b, bin, b.TempDir())
	var res *cmsload.Result
	for b.Loop() {
		res, err = cmsload.Run(context.Background(), cmsload.Options{
			Target:     cmsload.Target{URL: p.base, User: "admin", Password: crashPassword, Branch: 4},
			Load:       loadtest.Config{Concurrency: 8},
			Visibility: &cmsload.VisibilityOptions{Rate: 200, Duration: 60 * time.Second},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	v := res.Visibility
	if rate := v.Visible.ErrorRate(); rate > 1 {
		b.Fatalf("%.2f%% of the writes failed or never became visible: %v", rate, v.Visible.FirstError)
	}
	b.ReportMetric(v.Write.Throughput, "writes/s")
	b.ReportMetric(float64(v.Skipped), "skipped")
	b.ReportMetric(loadtest.Millis(v.Write.P50), "write-p50-ms")
	b.ReportMetric(loadtest.Millis(v.Write.P99), "write-p99-ms")
	b.ReportMetric(loadtest.Millis(v.Visible.P50), "visible-p50-ms")
	b.ReportMetric(loadtest.Millis(v.Visible.P99), "visible-p99-ms")
	b.ReportMetric(v.Visible.P50.Seconds()/max(v.Write.P50.Seconds(), 1e-6), "visible/write")
}
