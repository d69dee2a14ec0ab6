package app

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestLiveChangesThousandSubscribers measures the change stream of `cms
// run` with 1,000 concurrent SSE subscribers on loopback and logs the
// figures: the memory one subscriber costs (heap and stacks in use, and
// the process's RSS, after against before opening them; the clients run
// in this process too, each a goroutine with a 4 KiB read buffer) and the
// events delivered per second, against one subscriber measured the same
// way in the same run. It checks that every subscriber got every event
// once, in order; the figures are reported, not asserted.
func TestLiveChangesThousandSubscribers(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	const subscribers, events = 1000, 100
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.Live.MaxSubscribers = subscribers + 1 // the baseline's slot may still be held
	cfg.LogLevel = "warn"
	srv := startConfigured(t, cfg)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "loadType", v(1000, 201, "Load")))
	typeID := w.CreatedObjectIDs[0]
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	path := fmt.Sprintf("/delivery/api/branches/4/changes?types=%d", typeID)

	one := deliverAll(t, admin, typeID, openRawSSE(t, srv.HTTPAddr(), path, 1), events)
	for _, c := range one.clients {
		c.conn.Close()
	}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := rssBytes()
	clients := openRawSSE(t, srv.HTTPAddr(), path, subscribers)
	time.Sleep(200 * time.Millisecond) // let every subscription settle
	runtime.GC()
	runtime.ReadMemStats(&after)
	rssAfter := rssBytes()
	many := deliverAll(t, admin, typeID, clients, events)

	inUse := func(m runtime.MemStats) int64 { return int64(m.HeapInuse + m.StackInuse) }
	perSub := float64(inUse(after)-inUse(before)) / subscribers
	t.Logf("%d SSE subscribers: %.1f KiB heap+stacks per subscriber (client side included), RSS +%.1f KiB per subscriber",
		subscribers, perSub/1024, float64(rssAfter-rssBefore)/subscribers/1024)
	t.Logf("%d events (one write each): %.0f deliveries/s to %d subscribers (%.1f events/s each; writes done after %v, all delivered after %v) vs %.0f deliveries/s to 1 (writes %v, delivered %v); events/s ratio %.2f",
		events, many.perSecond, subscribers, many.perSecond/subscribers, many.written.Round(time.Millisecond), many.elapsed.Round(time.Millisecond),
		one.perSecond, one.written.Round(time.Millisecond), one.elapsed.Round(time.Millisecond), many.perSecond/subscribers/one.perSecond)
	t.Logf("process CPU per event: %v with %d subscribers, %v with 1: %.1f µs per additional delivery",
		many.cpuPerEvent.Round(time.Microsecond), subscribers, one.cpuPerEvent.Round(time.Microsecond),
		float64(many.cpuPerEvent-one.cpuPerEvent)/float64(time.Microsecond)/(subscribers-1))
}

type rawSSE struct {
	conn net.Conn
	got  atomic.Int64 // events received
	bad  atomic.Value // string: why the stream is wrong
	last int64        // last id, read by the stream's goroutine only
}

// openRawSSE opens n streams over plain connections (a small client,
// so the measured memory is mostly the server's).
func openRawSSE(t *testing.T, addr, path string, n int) []*rawSSE {
	t.Helper()
	out := make([]*rawSSE, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			_, _ = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Basic YWRtaW46dGVzdC1wYXNzd29yZA==\r\nAccept: text/event-stream\r\n\r\n", path, addr)
			br := bufio.NewReaderSize(c, 4096)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("stream %d: %v %v", i, err, resp)
				c.Close()
				return
			}
			s := &rawSSE{conn: c}
			out[i] = s
			go s.read(bufio.NewReaderSize(resp.Body, 4096))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range out {
			s.conn.Close()
		}
	})
	return out
}

func (s *rawSSE) read(br *bufio.Reader) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if id, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "id: "); ok {
			v, _ := strconv.ParseInt(id, 10, 64)
			if v <= s.last {
				s.bad.Store(fmt.Sprintf("id %d after %d", v, s.last))
			}
			s.last = v
			s.got.Add(1)
		}
	}
}

type delivered struct {
	clients []*rawSSE
	written time.Duration // the writes alone
	// cpuPerEvent is the process's CPU time (writes, indexing, fan-out,
	// clients) per event.
	cpuPerEvent time.Duration
	elapsed     time.Duration
	perSecond   float64
}

// loadWriters write concurrently, so events come faster than one
// writer's round trips.
const loadWriters = 8

// deliverAll writes n objects of typeID, one write each, and waits until
// every client has received all n events.
func deliverAll(t *testing.T, admin httpClient, typeID int64, clients []*rawSSE, n int) delivered {
	t.Helper()
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range loadWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += loadWriters {
				admin.create(obj(typeID, "", v(1000, 201, fmt.Sprintf("load %d", i))))
			}
		}()
	}
	wg.Wait()
	written := time.Since(start)
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range clients {
		for c.got.Load() < int64(n) {
			if time.Now().After(deadline) {
				t.Fatalf("a subscriber got %d of %d events", c.got.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	for _, c := range clients {
		if bad, _ := c.bad.Load().(string); bad != "" || c.got.Load() != int64(n) {
			t.Fatalf("a subscriber got %d events, want %d once each in order (%s)", c.got.Load(), n, bad)
		}
	}
	return delivered{clients: clients, written: written, elapsed: elapsed, cpuPerEvent: cpu / time.Duration(n), perSecond: float64(n*len(clients)) / elapsed.Seconds()}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssBytes is the process's resident set (Linux), 0 elsewhere.
func rssBytes() int64 {
	n, _ := testenv.ProcStatus(0, "VmRSS")
	return n
}
