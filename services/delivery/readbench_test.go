package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
)

// The uncached read benchmarks serve a catalogue of readArticles articles,
// each with a price, an author (of readAuthors) and readTagsPer tags (of
// readTags), through HTTP with the response caches off, so every request
// is computed: the engine query, source decoding, rendering, reference
// resolution and JSON encoding. Each request picks a random id, offset or
// price threshold. The figures are requests per second at a fixed number of
// connections with p50 and p99; the single-object figure is also a ratio
// against a bare net/http handler serving the same bytes, measured in the
// same run. allocs/req and B/req (the whole process's heap allocations per
// request) do not depend on the machine's load: compare changes by them.
//
// CMS_BENCH_READ_ARTICLES sets another number of articles and
// CMS_BENCH_COLUMN_BUDGET the embedded engine's column budget in bytes
// (bleve.WithColumnBudget; 0 = none), to compare sizes and the column
// index against Bleve alone.
var (
	readArticles = benchEnvInt("CMS_BENCH_READ_ARTICLES", 10000)
	readBudget   = benchEnvInt("CMS_BENCH_COLUMN_BUDGET", bleve.DefaultColumnBudget)
)

// benchEnvInt reads a benchmark's size from the environment (def when
// unset or not a number).
func benchEnvInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil && n >= 0 {
		return n
	}
	return def
}

const (
	readAuthors  = 100
	readTags     = 50
	readTagsPer  = 5
	readMaxPrice = 1000
)

// readFixture is the catalogue behind a harness.
type readFixture struct {
	h        *harness
	articles []int64
}

// newReadFixture loads the catalogue into a site on the engine e makes.
func newReadFixture(b *testing.B, e deliverytest.Engine) *readFixture {
	b.Helper()
	site := deliverytest.NewSiteOn(b, e)
	h := newHarnessOn(b, site, nil, false)
	h.group.api.cache = nil
	ctx := context.Background()
	ch := content.Change{Caller: &auth.Principal{Name: "bench"}}
	js := func(v any) json.RawMessage { r, _ := json.Marshal(v); return r }
	api := func(s string) *string { return &s }
	create := func(in []content.ObjectInput) []int64 {
		var out []int64
		for chunk := range slices.Chunk(in, 1000) {
			_, ids, err := site.Content.CreateObjects(ctx, "4", ch, chunk)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, ids...)
		}
		return out
	}
	attr := func(name, dt string, multi bool) content.ObjectInput {
		return content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: api(name),
			Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js(name)}, {Attribute: 1001, JSON: js(dt)},
				{Attribute: 1004, JSON: js(multi)}, {Attribute: 1017, JSON: js(false)}}}
	}
	ids := create([]content.ObjectInput{attr("author", "ObjRef", false), attr("tags", "ObjRef", true)})
	authorAttr, tagsAttr, price := ids[0], ids[1], site.Price
	typ := func(name string) content.ObjectInput {
		return content.ObjectInput{TypeID: content.RootID, APIIdentifier: api(name),
			Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js(name)}}}
	}
	ids = create([]content.ObjectInput{typ("article"), typ("person"), typ("label")})
	articleType, authorType, tagType := ids[0], ids[1], ids[2]
	named := func(t int64, n int, f string) []content.ObjectInput {
		out := make([]content.ObjectInput, n)
		for i := range out {
			out[i] = content.ObjectInput{TypeID: t, Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js(fmt.Sprintf(f, i))}}}
		}
		return out
	}
	authors := create(named(authorType, readAuthors, "Author %d"))
	tags := create(named(tagType, readTags, "Tag %d"))
	rnd := rand.New(rand.NewPCG(1, 2))
	arts := make([]content.ObjectInput, readArticles)
	for i := range arts {
		vals := []content.ValueInput{
			{Attribute: 1000, Language: 201, JSON: js(fmt.Sprintf("Article %05d", i))},
			{Attribute: price, JSON: js(float64(rnd.IntN(readMaxPrice*100)) / 100)},
			{Attribute: authorAttr, JSON: js(authors[rnd.IntN(len(authors))])},
		}
		for j := range readTagsPer {
			sr := int64(j)
			vals = append(vals, content.ValueInput{Attribute: tagsAttr, SortReverse: &sr, JSON: js(tags[(i+j*7)%len(tags)])})
		}
		arts[i] = content.ObjectInput{TypeID: articleType, Values: vals}
	}
	f := &readFixture{h: h, articles: create(arts)}
	site.Publish(b)
	return f
}

// diskBleve is the embedded engine as `cms run` uses it: Bleve on disk.
var diskBleve = deliverytest.Engine{Name: "bleve-disk", New: func(t testing.TB) (search.Engine, indexwriter.Options) {
	eng, err := bleve.New(t.TempDir(), bleve.WithColumnBudget(int64(readBudget)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng, indexwriter.Options{}
}}

var (
	readOnce sync.Once
	readFix  *readFixture
)

// BenchmarkUncachedReads: the uncached read path on the embedded engine
// (Bleve on disk, SQLite), 10,000 articles with 6 references each.
//
//   - get-8, get-32: one article by random id with author and tags
//     resolved, 8 and 32 connections; ratio-% = Delivery req/s / bare
//     net/http req/s serving the same bytes at the same connections
//     (target ≥ 25 at 8), p99/p50 (target ≤ 5 at 32); each logs its
//     figure next to its target.
//   - sorted-32: 20 articles sorted by price at a random offset, 32
//     connections (target ≥ 500 req/s, p99 ≤ 200 ms).
//   - filtered-8: filter=price>N&sort=price desc&take=50&resolve=author,tags
//     at a random N, 8 connections (target ≥ 600 req/s).
//   - facets-8: occurrences?fields=tags&filter=price>N at a random N, 8
//     connections (issue 31: p50 ≤ 50 ms, ≤ 2× filtered-8's p50).
//
// The fixture is built once per process (about a minute).
func BenchmarkUncachedReads(b *testing.B) {
	readOnce.Do(func() { readFix = newReadFixture(b, diskBleve) })
	if readFix == nil {
		b.Skip("fixture failed in an earlier run")
	}
	readFix.run(b)
}

// BenchmarkUncachedReadsElastic is BenchmarkUncachedReads on
// Elasticsearch (CMS_ELASTICSEARCH_URL; skipped without it, failing
// under CI=true): figures only.
func BenchmarkUncachedReadsElastic(b *testing.B) {
	// The body runs once (it has sub-benchmarks): the fixture is built
	// once and removed when the benchmark ends.
	newReadFixture(b, deliverytest.Engines()[1]).run(b)
}

func (f *readFixture) run(b *testing.B) {
	base := f.h.url + "/branches/4"
	get := func(r *rand.Rand) string {
		return base + "/objects/" + strconv.FormatInt(f.articles[r.IntN(len(f.articles))], 10) + "?resolve=author,tags"
	}
	sorted := func(r *rand.Rand) string {
		return base + "/types/article/objects?sort=price&take=20&skip=" + strconv.Itoa(r.IntN(min(readArticles, search.MaxResultWindow)-20))
	}
	filtered := func(r *rand.Rand) string {
		return base + "/types/article/objects?filter=price%3E" + strconv.Itoa(r.IntN(readMaxPrice)) +
			"&sort=price%20desc&take=50&resolve=author,tags"
	}
	facets := func(r *rand.Rand) string {
		return base + "/types/article/occurrences?fields=tags&filter=price%3E" + strconv.Itoa(r.IntN(readMaxPrice))
	}
	// Warm up: the first query using a field builds its column (one read
	// of every document), once per process.
	warm := rand.New(rand.NewPCG(5, 6))
	for _, u := range []func(*rand.Rand) string{get, sorted, filtered, facets} {
		fetch(b, http.DefaultClient, u(warm), 200)
	}
	for _, c := range []struct {
		name  string
		conns int
		url   func(*rand.Rand) string
		bare  bool
		// maxTail is issue 31's bound of p99/p50 (0: none).
		maxTail float64
	}{{"get-8", 8, get, true, 0}, {"get-32", 32, get, false, 5}, {"sorted-32", 32, sorted, false, 0}, {"filtered-8", 8, filtered, false, 0}, {"facets-8", 8, facets, false, 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.ResetTimer()
			stop := profileLoad(b, c.name)
			lt := runLoad(b, c.conns, b.N, c.url)
			stop()
			lt.report(b, "")
			if c.maxTail > 0 {
				b.Logf("%s: p99/p50 %.1f (target ≤ %g), p50 %.2f ms, p99 %.2f ms, %.0f allocs/req", c.name, lt.tail(), c.maxTail,
					lt.quantile(0.50), lt.quantile(0.99), float64(lt.allocs)/float64(lt.n))
			}
			if !c.bare {
				return
			}
			body := fetch(b, http.DefaultClient, c.url(rand.New(rand.NewPCG(3, 4))), 200)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("ETag", `"0123456789012345678901"`)
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			bare := runLoad(b, c.conns, b.N, func(*rand.Rand) string { return srv.URL })
			bare.report(b, "bare-")
			ratio := 100 * lt.rate() / bare.rate()
			b.ReportMetric(ratio, "ratio-%")
			b.Logf("%s: %.0f req/s, %.1f %% of the bare handler's %.0f (target ≥ %d %%), %.0f allocs/req (bare %.0f)", c.name,
				lt.rate(), ratio, bare.rate(), minRatio, float64(lt.allocs)/float64(lt.n), float64(bare.allocs)/float64(bare.n))
		})
	}
}

// profileLoad writes, when CMS_BENCH_PROFILES names a directory, a CPU
// profile of the load of sub-benchmark name (<name>-cpu.pb.gz; not with
// -cpuprofile) and the allocation profiles before and after it
// (<name>-allocs-before/after.pb.gz; `go tool pprof -diff_base before
// after` shows what the load allocated, without the fixture). The
// returned func ends the profiles.
func profileLoad(b *testing.B, name string) func() {
	dir := os.Getenv("CMS_BENCH_PROFILES")
	if dir == "" {
		return func() {}
	}
	write := func(suffix string, fn func(io.Writer) error) {
		f, err := os.Create(filepath.Join(dir, name+suffix))
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(fn(f), f.Close()); err != nil {
			b.Fatal(err)
		}
	}
	allocs := func(w io.Writer) error { runtime.GC(); return pprof.Lookup("allocs").WriteTo(w, 0) }
	write("-allocs-before.pb.gz", allocs)
	cpu, err := os.Create(filepath.Join(dir, name+"-cpu.pb.gz"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := cpu.Close(); err != nil {
			b.Fatal(err)
		}
		write("-allocs-after.pb.gz", allocs)
	}
}

// loadResult is what runLoad measured.
type loadResult struct {
	n    int
	wall time.Duration
	cpu  time.Duration // of the whole process (server and clients)
	durs []time.Duration
	// Heap allocations of the whole process (server and clients) during
	// the run: unlike req/s they do not depend on the machine's load.
	allocs, bytes uint64
}

func (l loadResult) rate() float64 { return float64(l.n) / l.wall.Seconds() }

// quantile is the p-quantile of the request durations in milliseconds.
func (l loadResult) quantile(p float64) float64 {
	return float64(l.durs[min(len(l.durs)-1, int(p*float64(len(l.durs))))].Microseconds()) / 1000
}

// tail is p99/p50.
func (l loadResult) tail() float64 { return l.quantile(0.99) / max(l.quantile(0.50), 0.001) }

// minRatio is issue 31's bound of get-8's ratio-%.
const minRatio = 25

func (l loadResult) report(b *testing.B, prefix string) {
	q := l.quantile
	b.ReportMetric(l.rate(), prefix+"req/s")
	// CPU time per request, steadier than wall time on a shared machine:
	// 2000/cpu-ms is what two otherwise idle cores could serve.
	b.ReportMetric(float64(l.cpu.Microseconds())/1000/float64(l.n), prefix+"cpu-ms/req")
	b.ReportMetric(q(0.50), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
	b.ReportMetric(float64(l.allocs)/float64(l.n), prefix+"allocs/req")
	b.ReportMetric(float64(l.bytes)/float64(l.n), prefix+"B/req")
	if prefix == "" {
		b.ReportMetric(l.tail(), "p99/p50")
	}
}

// runLoad sends n GETs (at least 200) from conns connections, each
// connection one goroutine sending its next request when the previous
// answer is read; url makes each request's address.
func runLoad(b *testing.B, conns, n int, url func(*rand.Rand) string) loadResult {
	b.Helper()
	n = max(n, 200)
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	durs := make([]time.Duration, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	t0, cpu0 := time.Now(), processCPU(b)
	for w := range conns {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), uint64(n)))
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t := time.Now()
				resp, err := client.Get(url(r))
				if err != nil {
					failed.CompareAndSwap(nil, err.Error())
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.CompareAndSwap(nil, fmt.Sprintf("%d: %s", resp.StatusCode, body))
					return
				}
				durs[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	wall, cpu := time.Since(t0), processCPU(b)-cpu0
	runtime.ReadMemStats(&mem1)
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
	slices.Sort(durs)
	return loadResult{n: n, wall: wall, cpu: cpu, durs: durs,
		allocs: mem1.Mallocs - mem0.Mallocs, bytes: mem1.TotalAlloc - mem0.TotalAlloc}
}
