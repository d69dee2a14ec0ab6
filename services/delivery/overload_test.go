package delivery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/search"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// gateEngine holds the next Search (when armed) until release is closed.
type gateEngine struct {
	search.Engine
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gateEngine) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	if g.armed.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.Engine.Search(ctx, req)
}

// TestOverload: with every query slot taken and no room in the queue, a
// request is answered at once with 503, Retry-After and a ProblemDetails;
// the request holding the slot completes normally.
func TestOverload(t *testing.T) {
	site := deliverytest.NewSite(t)
	gate := &gateEngine{Engine: site.Engine, entered: make(chan struct{}, 1), release: make(chan struct{})}
	site.Engine = search.WithQueryLimit(gate, search.QueryLimit{Concurrent: 1})
	h := newHarnessOn(t, site, nil, false)
	h.group.api.cache = nil
	url := h.url + "/branches/4/objects/home"
	gate.armed.Store(true)
	first := make(chan int, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			first <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-gate.entered
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(gate.release)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("overloaded: %d, Retry-After %q, %s: %s", resp.StatusCode, resp.Header.Get("Retry-After"),
			resp.Header.Get("Content-Type"), body)
	}
	if code := <-first; code != http.StatusOK {
		t.Fatalf("the request holding the slot: %d", code)
	}
}

// TestReadGate: a read by a gRPC client goes through the same gate as
// one of the HTTP API, with the response cache and in a setup without it:
// with the one worker of the read pool busy it waits for it in the pool's
// queue (cms_delivery_reads_waiting), is answered once the worker frees
// up, and when it does not within queries.queueWait it is refused with
// 503 (gRPC Unavailable) and Retry-After after that wait, once, not after
// a second wait in the engine's queue. gRPC reads, and every read without
// the response cache, used to go past the pool to the engine's queue.
func TestReadGate(t *testing.T) {
	const wait = time.Second
	site := deliverytest.NewSite(t)
	gate := &gateEngine{Engine: site.Engine, entered: make(chan struct{}, 1), release: make(chan struct{})}
	site.Engine = search.WithQueryLimit(gate, search.QueryLimit{Concurrent: 1, Queue: 8, MaxWait: wait})
	var n atomic.Int64
	filter := func() string { return fmt.Sprintf("price != %d", n.Add(1)) } // a miss: a filter no other read sent
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", basicAuth("admin"))
	for _, setup := range []struct {
		name  string
		cache bool
	}{{"response cache", true}, {"no response cache", false}} {
		h := newHarnessOn(t, site, testUsers, true, func(o *Options) {
			o.ReadWorkers, o.ReadQueue, o.ReadWait = 1, 8, wait
			if !setup.cache {
				o.Cache = nil
			}
		})
		grpcRead := func() (int, string) {
			var hdr metadata.MD
			_, err := h.client.ListTyped(admin, &deliveryv1.ListTypedRequest{Branch: "4", Type: "webPage", Filter: filter()},
				grpc.Header(&hdr))
			switch status.Code(err) {
			case codes.OK:
				return http.StatusOK, ""
			case codes.Unavailable:
				return http.StatusServiceUnavailable, strings.Join(hdr.Get("retry-after"), ",")
			}
			return 0, err.Error()
		}
		httpRead := func() (int, string) {
			req, _ := http.NewRequest(http.MethodGet, h.url+"/branches/4/types/webPage/objects?filter="+url.QueryEscape(filter()), nil)
			req.Header.Set("Authorization", basicAuth("admin"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Retry-After")
		}
		for _, c := range []struct {
			name string
			read func() (int, string)
		}{{"grpc", grpcRead}, {"http", httpRead}} {
			for _, freed := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/worker freed %v", setup.name, c.name, freed), func(t *testing.T) {
					gate.release = make(chan struct{})
					gate.armed.Store(true)
					first := make(chan int, 1)
					go func() { code, _ := httpRead(); first <- code }() // holds the worker and the engine's slot
					<-gate.entered
					start := time.Now()
					type answer struct {
						code  int
						extra string
					}
					got := make(chan answer, 1)
					go func() { code, extra := c.read(); got <- answer{code, extra} }()
					for h.group.ReadsWaiting() != 1 {
						select {
						case a := <-got:
							close(gate.release)
							<-first
							t.Fatalf("the read did not wait for the pool's worker: %d %s after %v", a.code, a.extra, time.Since(start))
						case <-time.After(time.Millisecond):
						}
					}
					if freed {
						close(gate.release)
					}
					a := <-got
					d := time.Since(start)
					if !freed {
						close(gate.release)
					}
					if code := <-first; code != http.StatusOK {
						t.Errorf("the read holding the worker: %d", code)
					}
					switch {
					case freed && a.code != http.StatusOK:
						t.Errorf("with the worker freed: %d %s", a.code, a.extra)
					case !freed && (a.code != http.StatusServiceUnavailable || a.extra == ""):
						t.Errorf("with the worker busy past the wait: %d, Retry-After %q; want 503 with Retry-After", a.code, a.extra)
					case !freed && (d < wait || d > wait*3/2):
						t.Errorf("refused after %v, want the wait (%v) once", d, wait)
					}
				})
			}
		}
	}
}
