package jobs_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/testenv"
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
			j, err := e.svc.Create(bg, jobs.CreateRequest{Branch: 4, Definition: 1204, Caller: &auth.Principal{Name: "bench"}})
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
			time.Sleep(20 * time.Millisecond) // each poll decodes the job: polling harder takes CPU from the jobs
		}
	}
}

// BenchmarkImportExport: objects per second of jobImportJson and
// jobExportJson for 10,000 and then 100,000 objects (CMS_BENCH_JOB_OBJECTS
// sets the larger count), with what the process holds while each job runs.
// The input is generated while it is uploaded (the benchmark holds none of
// it), and the peak resident set is reset before each job
// (/proc/self/clear_refs), so the peaks are the job's, not the setup's:
//
//   - peak-heap: the Go heap in use (HeapInuse), sampled every 10 ms;
//   - peak-rss: the kernel's high-water mark of the resident set during
//     the job (VmHWM), and rss-growth that peak minus the resident set
//     right before the job;
//   - peak-go: what the Go runtime holds from the system (Sys minus
//     HeapReleased) at its peak; RSS beyond it is memory outside the Go
//     runtime (SQLite's page cache in modernc's allocator, the embedded
//     NATS server's memory is Go memory).
//
// Both kinds stream, so the larger run's peaks should stay near the
// smaller one's: heap-ratio and rss-growth-ratio report larger/smaller.
//
// It runs on both setups (distributed: PostgreSQL and NATS, skipped
// without CMS_*_URL). After each import, storeReads measures the store
// reads of the hot paths on the imported objects; their -x ratios
// (larger/smaller count) are 1 where a read does not grow with the
// number of objects.
func BenchmarkImportExport(b *testing.B) {
	large := 100000
	if v, err := strconv.Atoi(os.Getenv("CMS_BENCH_JOB_OBJECTS")); err == nil && v > 0 {
		large = v
	}
	b.Run("embedded", func(b *testing.B) { benchImportExport(b, embedded, large) })
	b.Run("distributed", func(b *testing.B) { benchImportExport(b, distributed, large) })
}

func benchImportExport(b *testing.B, setup func(testing.TB) *env, large int) {
	for i := 0; i < b.N; i++ {
		var heaps, growths []float64
		reads := map[int]map[string]float64{}
		for _, n := range []int{10000, large} {
			e := setup(b)
			stop := e.runnerN(b, "bench", 1, nil)
			_, typ, err := e.content.CreateObjects(bg, "4", content.Change{Caller: &auth.Principal{Name: "bench"}},
				[]content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr("item")}})
			if err != nil {
				b.Fatal(err)
			}
			token, _, err := e.svc.StartInput(bg, testenv.ImportInput(n, typ[0]))
			if err != nil {
				b.Fatal(err)
			}
			suffix := fmt.Sprintf("-%dk", n/1000)
			run := func(name string, r jobs.CreateRequest) float64 {
				w := watchMemory(b)
				start := time.Now()
				j, err := e.svc.Create(bg, r)
				if err != nil {
					b.Fatal(err)
				}
				waitAllDone(b, e, j.ID, 1)
				rate := float64(n) / time.Since(start).Seconds()
				m := w()
				b.ReportMetric(rate, name+"-obj/s"+suffix)
				b.ReportMetric(m.heap, name+"-peak-heap-MiB"+suffix)
				b.ReportMetric(m.goHeld, name+"-peak-go-MiB"+suffix)
				b.ReportMetric(m.rss, name+"-peak-rss-MiB"+suffix)
				b.ReportMetric(m.rss-m.rssBefore, name+"-rss-growth-MiB"+suffix)
				b.ReportMetric(m.anon, name+"-peak-rss-anon-MiB"+suffix)
				b.ReportMetric(m.file, name+"-peak-rss-file-MiB"+suffix)
				b.ReportMetric(m.shmem, name+"-peak-rss-shmem-MiB"+suffix)
				heaps = append(heaps, m.heap)
				growths = append(growths, m.rss-m.rssBefore)
				return rate
			}
			run("import", jobs.CreateRequest{Branch: 4, Definition: 1202, Caller: &auth.Principal{Name: "bench"}, Input: &jobs.InputFile{Token: token},
				Parameters: []jobs.Parameter{{Name: "batchSize", Values: []string{"1000"}}}})
			reads[n] = storeReads(b, e.st, typ[0])
			for name, us := range reads[n] {
				b.ReportMetric(us, name+"-µs"+suffix)
			}
			run("export", jobs.CreateRequest{Branch: 4, Definition: 1200, Caller: &auth.Principal{Name: "bench"},
				Parameters: []jobs.Parameter{{Name: "type", Values: []string{"item"}}}})
			stop()
		}
		b.ReportMetric(max(heaps[2], heaps[3])/max(heaps[0], heaps[1]), "heap-ratio")
		b.ReportMetric(max(growths[2], growths[3])/max(growths[0], growths[1], 1), "rss-growth-ratio")
		for name, us := range reads[large] {
			b.ReportMetric(us/reads[10000][name], name+"-x")
		}
	}
}

// storeReads times (median µs of 21 calls) the store reads of the hot
// paths on the objects of type typ on the default branch, from the
// middle of them: a page of 1,001 ids on the branch (a list or export
// page) and on a chain of two branches, the rows and the values of 1,000
// ids (building a page), the uniqueness check of 1,000 GUIDs on every
// branch (an import batch), and one object by id, by GUID and by
// ApiIdentifier along the chain.
func storeReads(b *testing.B, st store.Store, typ int64) map[string]float64 {
	const calls = 21
	chain := []int64{99, 4} // 99 holds nothing: the query is the chain's
	all, err := st.ListObjects(bg, 4, store.ObjectQuery{TypeIDs: []int64{typ}})
	if err != nil {
		b.Fatal(err)
	}
	mid := all[len(all)/2-500 : len(all)/2+500]
	ids, guids := make([]int64, len(mid)), make([]string, len(mid))
	for k, o := range mid {
		ids[k], guids[k] = o.ID, o.GUID
	}
	after := mid[0].ID - 1
	out := map[string]float64{}
	timeIt := func(name string, want int, read func() (int, error)) {
		took := make([]time.Duration, calls)
		for k := range took {
			start := time.Now()
			got, err := read()
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			if got != want {
				b.Fatalf("%s: %d rows, want %d", name, got, want)
			}
			took[k] = time.Since(start)
		}
		slices.Sort(took)
		out[name] = float64(took[calls/2].Nanoseconds()) / 1e3
	}
	rows := func(objs []store.Object, err error) (int, error) { return len(objs), err }
	timeIt("page", 1001, func() (int, error) {
		return rows(st.ListObjectsIn(bg, []int64{4}, store.ObjectQuery{TypeIDs: []int64{typ}, AfterID: after, Limit: 1001}))
	})
	timeIt("chain-page", 1001, func() (int, error) {
		return rows(st.ListObjectsIn(bg, chain, store.ObjectQuery{TypeIDs: []int64{typ}, AfterID: after, Limit: 1001}))
	})
	timeIt("rows-1000", 1000, func() (int, error) { return rows(st.GetObjectsIn(bg, chain, ids)) })
	timeIt("values-1000", 1000, func() (int, error) {
		v, err := st.ListValuesIn(bg, chain, ids, store.ValueFilter{})
		return len(v), err
	})
	timeIt("unique-1000", 1000, func() (int, error) { return rows(st.FindObjectsIn(bg, nil, guids, nil)) })
	timeIt("get", 1, func() (int, error) { return rows(st.GetObjectsIn(bg, chain, ids[:1])) })
	timeIt("by-guid", 1, func() (int, error) { return rows(st.FindObjectsIn(bg, chain, guids[:1], nil)) })
	timeIt("by-api", 1, func() (int, error) { return rows(st.FindObjectsIn(bg, chain, nil, []string{"item"})) })
	return out
}

// memPeaks is what watchMemory saw (MiB).
type memPeaks struct{ heap, goHeld, rss, rssBefore, anon, file, shmem float64 }

// watchMemory collects garbage, resets the kernel's peak resident set of
// the process and samples the Go heap every 10ms until the returned
// function is called, which returns the peaks.
func watchMemory(b *testing.B) func() memPeaks {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak resident set: %v", err)
	}
	before := procStatusMiB(b, "VmRSS")
	var heap, held atomic.Uint64
	var anon, file, shmem float64 // peaks of the resident set's parts
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > heap.Load() {
				heap.Store(ms.HeapInuse)
			}
			if g := ms.Sys - ms.HeapReleased; g > held.Load() {
				held.Store(g)
			}
			anon = max(anon, procStatusMiB(b, "RssAnon"))
			file = max(file, procStatusMiB(b, "RssFile"))
			shmem = max(shmem, procStatusMiB(b, "RssShmem"))
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() memPeaks {
		close(done)
		<-stopped
		return memPeaks{heap: float64(heap.Load()) / (1 << 20), goHeld: float64(held.Load()) / (1 << 20),
			rss: procStatusMiB(b, "VmHWM"), rssBefore: before, anon: anon, file: file, shmem: shmem}
	}
}

// procStatusMiB is a memory line of /proc/self/status in MiB.
func procStatusMiB(b *testing.B, field string) float64 {
	n, err := testenv.ProcStatus(0, field)
	if err != nil {
		b.Fatal(err)
	}
	return float64(n) / (1 << 20)
}
