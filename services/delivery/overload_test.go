package delivery

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/search"
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
