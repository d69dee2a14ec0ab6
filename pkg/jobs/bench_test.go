package jobs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/store"
)

// BenchmarkJobsStarted: jobs created, queued, run (a kind that does
// nothing) and finished per second on the embedded setup, against the
// baseline of the same number of bare store transactions (a job row each,
// no queue) measured in the same run.
func BenchmarkJobsStarted(b *testing.B) {
	const jobsPerRound = 200
	for i := 0; i < b.N; i++ {
		e := embedded(b)
		noop := map[string]jobs.KindFunc{jobs.KindCleanupFiles: func(context.Context, *jobs.Task) error { return nil }}
		stop := e.runnerN(b, "bench", 4, noop)
		start := time.Now()
		var last int64
		for k := 0; k < jobsPerRound; k++ {
			j, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: 1204, User: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			last = j.ID
		}
		waitAllDone(b, e, last, jobsPerRound)
		jobsRate := float64(jobsPerRound) / time.Since(start).Seconds()
		stop()
		start = time.Now()
		for k := 0; k < jobsPerRound; k++ {
			tx, err := e.st.Begin(bg, store.TxMeta{User: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.InsertJob(bg, store.Job{Branch: 4, Definition: 1204, Doc: []byte(`{}`)}); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(bg); err != nil {
				b.Fatal(err)
			}
		}
		baseRate := float64(jobsPerRound) / time.Since(start).Seconds()
		b.ReportMetric(jobsRate, "jobs/s")
		b.ReportMetric(baseRate, "baseline-tx/s")
		b.ReportMetric(jobsRate/baseRate, "ratio")
	}
}

// waitAllDone waits until the newest n jobs up to last have finished.
func waitAllDone(b *testing.B, e *env, last int64, n int) {
	deadline := time.Now().Add(5 * time.Minute)
	for id := last - int64(n) + 1; id <= last; id++ {
		for {
			j, err := e.svc.Get(bg, id)
			if err != nil {
				b.Fatal(err)
			}
			if j.Terminal() {
				if j.State != jobs.StateSucceeded {
					b.Fatalf("job %d: %q", id, j.StateMessage)
				}
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("job %d did not finish", id)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// BenchmarkImportExport: objects per second of jobImportJson and
// jobExportJson for 10,000 and then 100,000 objects (CMS_BENCH_JOB_OBJECTS
// sets the larger count), with the peak Go heap during each job and the
// process's peak RSS after it. Both kinds stream, so the peak heap of the
// larger run should stay near the smaller one's: heap-ratio reports
// larger/smaller.
func BenchmarkImportExport(b *testing.B) {
	large := 100000
	if v, err := strconv.Atoi(os.Getenv("CMS_BENCH_JOB_OBJECTS")); err == nil && v > 0 {
		large = v
	}
	for i := 0; i < b.N; i++ {
		var heaps []float64
		for _, n := range []int{10000, large} {
			e := embedded(b)
			stop := e.runnerN(b, "bench", 1, nil)
			_, typ, err := e.content.CreateObjects(bg, "4", content.Change{User: "bench"},
				[]content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr("item")}})
			if err != nil {
				b.Fatal(err)
			}
			token, _, err := e.svc.StartInput(bg, bytes.NewReader(bulkInput(n, typ[0])))
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			peak := watchHeap()
			start := time.Now()
			j, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: 1202, User: "bench", Input: &jobs.InputFile{Token: token},
				Parameters: []jobs.Parameter{{Name: "batchSize", Values: []string{"1000"}}}})
			if err != nil {
				b.Fatal(err)
			}
			waitAllDone(b, e, j.ID, 1)
			importRate := float64(n) / time.Since(start).Seconds()
			importHeap := peak()
			runtime.GC()
			peak = watchHeap()
			start = time.Now()
			j, err = e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: 1200, User: "bench",
				Parameters: []jobs.Parameter{{Name: "type", Values: []string{"item"}}}})
			if err != nil {
				b.Fatal(err)
			}
			waitAllDone(b, e, j.ID, 1)
			exportRate := float64(n) / time.Since(start).Seconds()
			exportHeap := peak()
			stop()
			suffix := fmt.Sprintf("-%dk", n/1000)
			b.ReportMetric(importRate, "import-obj/s"+suffix)
			b.ReportMetric(exportRate, "export-obj/s"+suffix)
			b.ReportMetric(importHeap, "import-peak-heap-MiB"+suffix)
			b.ReportMetric(exportHeap, "export-peak-heap-MiB"+suffix)
			b.ReportMetric(maxRSSMiB(), "peak-rss-MiB"+suffix)
			heaps = append(heaps, max(importHeap, exportHeap))
		}
		b.ReportMetric(heaps[1]/heaps[0], "heap-ratio")
	}
}

// watchHeap samples the Go heap every 10ms until the returned function is
// called, which returns the peak in MiB.
func watchHeap() func() float64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() float64 { close(done); return float64(peak.Load()) / (1 << 20) }
}

func maxRSSMiB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}
