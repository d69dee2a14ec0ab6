package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// uncachedReads drives Delivery list reads that miss the response caches
// (a filter value no earlier request sent) on 200 seeded objects: each is
// a search of the engine.
type uncachedReads struct {
	base   string
	client *http.Client
	data   *cmsload.Data
	n      atomic.Int64
	// shed counts the 503 answers.
	shed atomic.Int64
	// conns are the connections of steady's workers, kept between phases.
	conns []*rawConn
}

// seedUncachedReads seeds the objects the reads list and waits until
// Delivery serves them.
func seedUncachedReads(t *testing.T, base string) *uncachedReads {
	t.Helper()
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	d, err := cmsload.Seed(context.Background(), cmsload.Target{URL: base, User: "admin", Password: "test-password",
		Branch: 4, Client: client}, 200, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := &uncachedReads{base: base, client: client, data: d}
	t.Cleanup(func() {
		for _, rc := range u.conns {
			rc.close()
		}
	})
	return u
}

// path lists 5 of the objects, uncached: the i-th read filters on a value
// no other read sends.
func (u *uncachedReads) path(i int64) string {
	return fmt.Sprintf("/delivery/api/branches/4/types/%s/objects?take=5&skip=%d&filter=%s%%20!%%3D%%20%d",
		u.data.TypeAPI, i%190, strings.Replace(u.data.TypeAPI, "loadItem", "loadTitle", 1), i)
}

// get reads a page through the http.Client; a 503 is counted in shed.
func (u *uncachedReads) get(ctx context.Context) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.base+u.path(u.n.Add(1)), nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.SetBasicAuth("admin", "test-password")
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable {
		u.shed.Add(1)
	}
	return resp.StatusCode, resp.Header, b, err
}

// rawConn is one keep-alive connection of the load generator of steady: a
// request is written and its answer read on the worker's own goroutine,
// into buffers the connection keeps. An http.Transport connection takes
// two more goroutines (its read and write loops) and two handoffs per
// request, and the garbage collector scans and shrinks the stacks of all
// of them at every cycle: at 200 connections that made the generator's
// share of the process's CPU larger than at 20, CPU the server then
// lacked.
type rawConn struct {
	c      net.Conn
	br     *bufio.Reader
	reused bool
	req    []byte
	body   bytes.Buffer
}

func (rc *rawConn) close() {
	if rc.c != nil {
		_ = rc.c.Close()
		rc.c, rc.reused = nil, false
	}
}

// rawGet reads a page on rc; a 503 is counted in shed. A connection the
// server closed while it was idle is redialled once, as http.Transport
// retries an idempotent request.
func (u *uncachedReads) rawGet(rc *rawConn) (int, []byte, error) {
	addr := strings.TrimPrefix(u.base, "http://")
	rc.req = fmt.Appendf(rc.req[:0], "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Basic %s\r\n\r\n",
		u.path(u.n.Add(1)), addr, base64.StdEncoding.EncodeToString([]byte("admin:test-password")))
	for attempt := 0; ; attempt++ {
		if rc.c == nil {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return 0, nil, err
			}
			rc.c, rc.br = c, bufio.NewReaderSize(c, 16<<10)
		}
		reused := rc.reused
		code, err := rc.exchange()
		if err == nil {
			if code == http.StatusServiceUnavailable {
				u.shed.Add(1)
			}
			return code, rc.body.Bytes(), nil
		}
		rc.close()
		if !reused || attempt > 0 {
			return 0, nil, err
		}
	}
}

// exchange writes rc.req and reads the answer into rc.body.
func (rc *rawConn) exchange() (int, error) {
	if err := rc.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, err
	}
	if _, err := rc.c.Write(rc.req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return 0, err
	}
	rc.body.Reset()
	_, err = rc.body.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return 0, err
	}
	if resp.Close {
		rc.close()
	} else {
		rc.reused = true
	}
	return resp.StatusCode, nil
}

// window is what steady measured: requests answered 200 within the
// window and their p99, the other answers.
type window struct {
	ok, failed int64
	elapsed    time.Duration
	p99        time.Duration
	firstErr   error
	// cpu is what the process (server and load generator) and the
	// machine spent during the window (not the ramp), allocs and gcs the
	// heap allocations and garbage collections of the process then.
	cpu    cpuUse
	allocs uint64
	gcs    uint64
}

// heapUse reads the process's heap allocations and completed garbage
// collections so far.
func heapUse() (allocs, gcs uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		allocs = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		gcs = s[1].Value.Uint64()
	}
	return allocs, gcs
}

// windowProfile starts, when CMS_SHEDDING_PROFILES names a directory, a
// CPU profile of one window (shed-<conns>-<n>.pb.gz; `go tool pprof
// dir/shed-200-*` merges the rounds) and returns its stop.
func windowProfile(conns int) func() {
	dir := os.Getenv("CMS_SHEDDING_PROFILES")
	if dir == "" {
		return func() {}
	}
	for n := 0; ; n++ {
		name := filepath.Join(dir, fmt.Sprintf("shed-%d-%d.pb.gz", conns, n))
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) //nolint:gosec // a file in the directory the tester named
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil || pprof.StartCPUProfile(f) != nil {
			if f != nil {
				_ = f.Close()
			}
			return func() {}
		}
		return func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
}

// steady runs conns workers reading without pause and measures the
// requests that end within a window after a ramp-up. The requests in
// flight when the window ends are not waited for in the measure: a phase
// that drained them would weigh its last ones at the latency of 200
// connections.
func (u *uncachedReads) steady(conns int, ramp, length time.Duration) window {
	type result struct {
		end time.Time
		dur time.Duration
		err error
	}
	for len(u.conns) < conns {
		u.conns = append(u.conns, &rawConn{})
	}
	stop := make(chan struct{})
	results := make([][]result, conns)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				code, b, err := u.rawGet(u.conns[w])
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("%d: %.200s", code, b)
				}
				results[w] = append(results[w], result{time.Now(), time.Since(t0), err})
			}
		}()
	}
	time.Sleep(ramp) // the ramp and the window, not a synchronisation
	stopProfile := windowProfile(conns)
	before, from := readCPUUse(), time.Now()
	allocs, gcs := heapUse()
	time.Sleep(length)
	after, to := readCPUUse(), time.Now()
	allocsAfter, gcsAfter := heapUse()
	stopProfile()
	close(stop)
	wg.Wait()
	out := window{elapsed: to.Sub(from), cpu: cpuUse{at: after.at, process: after.process - before.process,
		total: after.total - before.total, idle: after.idle - before.idle},
		allocs: allocsAfter - allocs, gcs: gcsAfter - gcs}
	var durs []time.Duration
	for _, rs := range results {
		for _, r := range rs {
			if r.end.Before(from) || r.end.After(to) {
				continue
			}
			if r.err != nil {
				out.failed++
				if out.firstErr == nil {
					out.firstErr = r.err
				}
				continue
			}
			out.ok++
			durs = append(durs, r.dur)
		}
	}
	slices.Sort(durs)
	out.p99 = loadtest.Percentile(durs, 0.99)
	return out
}

// TestLoadSheddingKeepsThroughput: uncached Delivery reads at 200
// connections are all served (no 503: the queue in front of the search
// engine admits queries while their expected wait stays within
// queries.queueWait; the fixed queue of 64 shed most of them), at no less
// throughput than minThroughputRatio of the one at 20 connections, with
// p99 within the search deadline.
//
// How the ratio is measured, and why so: the throughput of either load
// follows the CPU share the process gets while it runs more than what a
// request costs, and on a machine shared with other work that share moves
// within a second (the summed windows of earlier versions of this test
// measured 0.77 to 1.07 for a server that measured 0.95 to 0.97 on a
// quiet machine; single windows' throughput ratios here ranged from 0.07
// to 3.85). So:
//
//   - A window's throughput is counted per core the process could use
//     (perCore: the CPU it got plus the machine's idle CPU). Alone on the
//     machine that is every core in both windows and the ratio is the
//     throughput's; a server that leaves cores idle at 200 connections
//     loses as much; only what other work took is not counted against
//     it. (What it cannot see: a server that idles while other work soaks
//     up the idle cores; the quiet-machine runs of CI see that.)
//   - One attempt is three pairs of adjacent windows, 20 then 200, 200
//     then 20, 20 then 200 (a load that drifts over the attempt favours
//     neither), and its ratio is the median of the three pairs' ratios: a
//     burst of other work in one window moves one pair, not the median.
//   - The ratio is the best of at most measureAttempts attempts (the
//     first that reaches the bound ends the test): a server slower at 200
//     connections is slower in every pair of every attempt, a burst is
//     not. Every window of every attempt must answer no 503 and the p99
//     at 200 connections of each must stay within the deadline: those are
//     never retried.
//
// Quiet, one attempt is 6 windows of 0.7 s (the earlier version measured
// at least 6 of 0.8 s). Measured on the 2-core machine shared with other
// work (load 6 to 11, the process getting 0.25 to 1.9 cores, machine idle
// 0-2 %), 11 runs: pairs' ratios per usable core within 0.65-1.20 (of the
// throughput 0.07-2.28), attempt ratios 0.79-1.00, no 503, p99 at 200
// connections 60-764 ms; 9 passed (6 at the first attempt), 2 failed
// (attempts 0.88, 0.86, 0.79 and 0.89, 0.86, 0.89): when the process gets
// under about 0.8 of a core a request costs it 141-172 µs at 20
// connections and 162-188 at 200 (scheduling 200 goroutines on a starved
// process), a real cost the bound then sees, against 139 and 144 µs when
// it got 1.6 cores (ratio 0.96).
func TestLoadSheddingKeepsThroughput(t *testing.T) {
	srv, _ := edgeServerGRPC(t, nil)
	cfg := DefaultConfig()
	base := "http://" + srv.HTTPAddr()
	u := seedUncachedReads(t, base)
	u.steady(200, 0, 500*time.Millisecond) // warm up: connections, credentials cache, columns, query times
	type sum struct {
		ok, failed int64
		elapsed    time.Duration
		p99        time.Duration
		cpu        cpuUse
		allocs     uint64
		gcs        uint64
	}
	tput := func(w window) float64 { return float64(w.ok) / w.elapsed.Seconds() }
	// perCore is a window's throughput per core the process could use:
	// the CPU it got and the machine's idle CPU (the rest the machine's
	// other work took). Alone on the machine that is all cores in both
	// windows, and the ratio is the throughput's; a server that leaves
	// cores idle at 200 connections loses as much; only the share other
	// work takes is not counted against it.
	perCore := func(w window) float64 {
		usable := w.cpu.process.Seconds()
		if w.cpu.total > 0 {
			usable += float64(w.cpu.idle) / float64(w.cpu.total) * float64(runtime.NumCPU()) * w.elapsed.Seconds()
		}
		if usable <= 0 { // no CPU figures (not Linux): the throughput
			return tput(w)
		}
		return float64(w.ok) / usable
	}
	add := func(s *sum, conns int, w window) {
		s.ok += w.ok
		s.failed += w.failed
		s.elapsed += w.elapsed
		s.p99 = max(s.p99, w.p99)
		s.cpu.process += w.cpu.process
		s.cpu.total += w.cpu.total
		s.cpu.idle += w.cpu.idle
		s.allocs += w.allocs
		s.gcs += w.gcs
		if w.firstErr != nil {
			t.Logf("%d connections: %d failed, e.g. %v", conns, w.failed, w.firstErr)
		}
	}
	// What the throughput is measured on: the CPU the process got in the
	// windows (the machine's other work takes the rest) and what a request
	// cost it there, in CPU time, heap allocations and garbage
	// collections.
	use := func(s sum) string {
		idle := 0.0
		if s.cpu.total > 0 {
			idle = 100 * float64(s.cpu.idle) / float64(s.cpu.total)
		}
		n := float64(max(s.ok+s.failed, 1))
		return fmt.Sprintf("%.0f req/s (p99 %v), process CPU %.2f cores, %.0f µs, %.0f allocations per request, %.2f GCs per 1000 requests (server and load generator), machine idle %.0f %%",
			float64(s.ok)/s.elapsed.Seconds(), s.p99, s.cpu.process.Seconds()/s.elapsed.Seconds(),
			float64(s.cpu.process.Microseconds())/n, float64(s.allocs)/n, 1000*float64(s.gcs)/n, idle)
	}
	shedBefore := u.shed.Load()
	const ramp, length = 200 * time.Millisecond, 500 * time.Millisecond
	var failed int64
	var p99 time.Duration
	best := 0.0
	for attempt := 1; attempt <= measureAttempts && best < minThroughputRatio; attempt++ {
		var at20, at200 sum
		ratios, raw := make([]float64, 0, 3), make([]float64, 0, 3)
		for pair := range 3 {
			var w20, w200 window
			if pair%2 == 0 {
				w20 = u.steady(20, ramp, length)
				w200 = u.steady(200, ramp, length)
			} else {
				w200 = u.steady(200, ramp, length)
				w20 = u.steady(20, ramp, length)
			}
			add(&at20, 20, w20)
			add(&at200, 200, w200)
			ratios = append(ratios, perCore(w200)/max(perCore(w20), 1e-9))
			raw = append(raw, tput(w200)/max(tput(w20), 1e-9))
		}
		failed += at20.failed + at200.failed
		p99 = max(p99, at200.p99)
		slices.Sort(ratios)
		slices.Sort(raw)
		ratio := ratios[len(ratios)/2]
		best = max(best, ratio)
		t.Logf("attempt %d: ratio per usable core %.2f (the pairs' %.2f), of the throughput %.2f (%.2f), 503s so far %d",
			attempt, ratio, ratios, raw[len(raw)/2], raw, u.shed.Load()-shedBefore)
		t.Logf("attempt %d, 20 connections: %s", attempt, use(at20))
		t.Logf("attempt %d, 200 connections: %s", attempt, use(at200))
	}
	shed := u.shed.Load() - shedBefore
	if shed != 0 || failed != 0 {
		t.Errorf("%d reads were shed with 503 below the queue wait %v, %d failed in all", shed, cfg.Queries.QueueWait, failed)
	}
	if metric := scrape(t, base)[`cms_shed_total{group="delivery"}`]; metric != float64(u.shed.Load()) {
		t.Errorf("cms_shed_total{group=\"delivery\"} = %v, %d answers were 503", metric, u.shed.Load())
	}
	if best < minThroughputRatio {
		t.Errorf("throughput at 200 connections is %.0f %% of the one at 20 in the best of %d attempts, want at least %.0f %%",
			100*best, measureAttempts, 100*minThroughputRatio)
	}
	if p99 > cfg.Timeouts.Search {
		t.Errorf("p99 at 200 connections %v, beyond the search deadline %v", p99, cfg.Timeouts.Search)
	}
}

// measureAttempts is the most attempts TestLoadSheddingKeepsThroughput
// measures the ratio in.
const measureAttempts = 3

// minThroughputRatio is the least throughput at 200 connections, as a
// share of the one at 20 (per usable core, see the test), the test
// accepts: the 90 %.
//
// History: on a quiet 2-core machine the ratio was 0.90 to 0.91 before the
// generator read on its own goroutines and list pages allocated their
// values by size (a request cost 190 µs of CPU at 20 connections, 210 at
// 200: more garbage collections, and the stacks of 200 idle keep-alive
// connections shrunk at each one and grown again by the next request).
// Since an uncached read reads the index version once, resolves its branch
// once per version, shares one engine deadline and runs on the read pool
// (delivery.ReadPool), on the same quiet machine a request cost 140-148 µs
// at 20 connections and 146-152 µs at 200 and the summed ratio was
// 0.95-1.05; with other work on the machine (load 2 to 10, the process
// getting 0.3 to 1.3 cores) it was 0.77-1.07 in 20 runs: it followed the
// CPU share the process got in each phase, so the bound stayed at 0.75
// until the measurement (the test's comment) stopped weighing one burst.
const minThroughputRatio = 0.9

// shedSummary matches the summary line of shed requests.
var shedSummary = regexp.MustCompile(`msg="overloaded: requests shed with 503" shed=(\d+) groups="?delivery=(\d+)`)

// TestShedRequestsAreCountedNotLogged: with one query slot and no queue,
// concurrent uncached reads are shed with 503, Retry-After and reason
// OVERLOADED; each is counted in cms_shed_total and summed up in summary
// lines (one per interval), and none is logged at ERROR or one by one.
func TestShedRequestsAreCountedNotLogged(t *testing.T) {
	srv, logs := edgeServerGRPC(t, func(c *Config) {
		c.Queries.Concurrent, c.Queries.Queue, c.Queries.ShedLogInterval = 1, 0, 100*time.Millisecond
	})
	base := "http://" + srv.HTTPAddr()
	u := seedUncachedReads(t, base)
	seedShed := int64(scrape(t, base)[`cms_shed_total{group="delivery"}`])
	var wg sync.WaitGroup
	var bad atomic.Value
	for round := 0; round < 20 && u.shed.Load() == 0; round++ {
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, h, b, err := u.get(context.Background())
				var p gateway.Problem
				_ = json.Unmarshal(b, &p)
				switch {
				case err != nil:
					bad.Store(err.Error())
				case code == http.StatusServiceUnavailable && (h.Get("Retry-After") != "1" || p.Reason != gateway.ReasonOverloaded):
					bad.Store(fmt.Sprintf("shed answer: Retry-After %q, %s", h.Get("Retry-After"), b))
				case code != http.StatusOK && code != http.StatusServiceUnavailable:
					bad.Store(fmt.Sprintf("%d %s", code, b))
				}
			}()
		}
		wg.Wait()
	}
	if s, ok := bad.Load().(string); ok {
		t.Fatal(s)
	}
	shed := u.shed.Load()
	if shed == 0 {
		t.Fatal("no read was shed with one query slot and no queue")
	}
	// The seeding may have been shed too (and retried): the metric counts
	// those as well.
	metric := func() int64 { return int64(scrape(t, base)[`cms_shed_total{group="delivery"}`]) }
	if m := metric() - seedShed; m != shed {
		t.Errorf("cms_shed_total{group=\"delivery\"} grew by %d, %d reads were shed", m, shed)
	}
	pollUntil(t, 5*time.Second, "summary lines adding up to cms_shed_total", func() bool {
		var n int64
		for _, m := range shedSummary.FindAllStringSubmatch(logs.String(), -1) {
			k, _ := strconv.ParseInt(m[2], 10, 64)
			n += k
		}
		return n == metric()
	})
	out := logs.String()
	if n := strings.Count(out, "level=ERROR"); n > 0 {
		t.Errorf("%d ERROR lines for %d shed reads:\n%s", n, shed, out)
	}
	if n := strings.Count(out, `msg="grpc call"`) + strings.Count(out, "msg=http") + strings.Count(out, `msg="http`); n > 0 {
		t.Errorf("%d lines logged one by one for %d shed reads:\n%s", n, shed, out)
	}
	lines := strings.Count(out, "\n")
	t.Logf("%d reads shed, %d summary lines, %d log lines in all", shed, len(shedSummary.FindAllString(out, -1)), lines)
}

// TestAccessLog: by default (`make run`) a request leaves no log line;
// with accessLog each leaves exactly one compact line, the edge's, not
// one more from the service call behind it.
func TestAccessLog(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("accessLog=%v", on), func(t *testing.T) {
			srv, logs := edgeServerGRPC(t, func(c *Config) { c.AccessLog = on })
			c := httpClient{t: t, base: "http://" + srv.HTTPAddr(), user: "admin", pass: "test-password"}
			ids := []string{"access-ok-1", "access-404-2", "access-delivery-3"}
			c.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/4", "", "X-Request-Id", ids[0])
			c.must(http.StatusNotFound, http.MethodGet, "/apis/cms/v1/branches/4/objects/999999", "", "X-Request-Id", ids[1])
			c.must(http.StatusNotFound, http.MethodGet, "/delivery/api/branches/4/objects/nothing-here", "", "X-Request-Id", ids[2])
			want := 0
			if on {
				want = 1
			}
			for _, id := range ids {
				if n := strings.Count(logs.String(), "request_id="+id); n != want {
					t.Errorf("request %s: %d log lines, want %d:\n%s", id, n, want, logs)
				}
			}
			if on && !strings.Contains(logs.String(), `level=INFO msg=http method=GET path=/apis/cms/v1/branches/4 status=200`) {
				t.Errorf("no compact access line:\n%s", logs)
			}
		})
	}
}
