package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// outageBound is how fast an outage must be answered with the short
// deadlines the test configures (search 300 ms, cache 100 ms).
const outageBound = 3 * time.Second

// TestComponentOutages runs Delivery and Index against the real
// Elasticsearch and Redis through fault proxies and takes them away:
// frozen (accepts, never answers) and refusing (port closed). Uncached
// Delivery reads and Index searches answer 503 + Retry-After as
// ProblemDetails within outageBound; cached Delivery answers keep coming;
// Delivery stays ready while its cache answers, Index does not; a frozen
// Redis only costs the cache. When the components return, everything
// recovers by itself.
func TestComponentOutages(t *testing.T) {
	config, _ := isolatedDistributed(t, "outage")
	base := config("")
	esProxy := newFaultProxy(t, hostPort(t, base.Search.URL))
	redisProxy := newFaultProxy(t, hostPort(t, base.Cache.URL))
	const cacheTimeout = 300 * time.Millisecond
	viaProxies := func(target string) Config {
		cfg := config(target)
		cfg.Search.URL = "http://" + esProxy.Addr
		ru, _ := url.Parse(cfg.Cache.URL)
		ru.Host = redisProxy.Addr
		cfg.Cache.URL = ru.String()
		cfg.Timeouts.Search, cfg.Timeouts.Cache = 300*time.Millisecond, cacheTimeout
		cfg.Timeouts.Ready = 500 * time.Millisecond
		return cfg
	}
	serve := func(cfg Config) httpClient {
		return httpClient{t: t, base: "http://" + startConfigured(t, cfg).HTTPAddr(), user: "admin", pass: "test-password"}
	}
	mgmt := serve(config(TargetManagement))
	serve(config(TargetIndexer))
	deliv := serve(viaProxies(TargetDelivery))
	index := serve(viaProxies(TargetIndex))

	w := mgmt.create(obj(0, "outage", v(1000, 201, "Outage")))
	minV := strconv.FormatInt(w.Transaction.ID, 10)
	deliv.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects/outage", "",
		"X-Cms-Min-Version", minV, "X-Cms-Max-Wait", "10s")
	const cached = "/delivery/api/branches/4/objects/outage?props=1"
	// Now in the cache. Under load one cache write can exceed the test's
	// 300 ms cache deadline, and then nothing is cached (by design): ask
	// a few times so that one write lands.
	for range 3 {
		deliv.must(http.StatusOK, http.MethodGet, cached, "")
	}
	search := func() httpResult {
		return index.do(http.MethodPost, "/apis/index/v1/branches/4/objects", `{"filter":{"searchPhrase":"outage"}}`)
	}
	if r := search(); r.code != http.StatusOK {
		t.Fatalf("index search before the outage = %d: %s", r.code, r.body)
	}

	uncached := 0
	for _, mode := range []int32{proxyFrozen, proxyRefusing} {
		name := map[int32]string{proxyFrozen: "frozen", proxyRefusing: "refusing"}[mode]
		esProxy.Set(mode)
		uncached++
		path := "/delivery/api/branches/4/objects/outage?props=" + strconv.Itoa(uncached%2) + "&lang=de-DE&n=" + strconv.Itoa(uncached)
		expectUnavailable(t, name+" search: delivery", func() httpResult { return deliv.do(http.MethodGet, path, "") })
		expectUnavailable(t, name+" search: index", search)
		timed(t, name+" search: cached delivery read", func() httpResult { return deliv.do(http.MethodGet, cached, "") },
			http.StatusOK)
		timed(t, name+" search: delivery readyz", func() httpResult { return deliv.do(http.MethodGet, "/readyz", "") },
			http.StatusOK)
		timed(t, name+" search: index readyz", func() httpResult { return index.do(http.MethodGet, "/readyz", "") },
			http.StatusServiceUnavailable)
	}

	// Elasticsearch returns: no restart needed.
	esProxy.Set(proxyForward)
	pollUntil(t, 10*time.Second, "index search after recovery", func() bool { return search().code == http.StatusOK })
	deliv.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects/outage?lang=en-US", "")
	index.must(http.StatusOK, http.MethodGet, "/readyz", "")

	// Redis frozen: Delivery serves uncached, within the bound, and stays
	// ready (the search engine answers).
	redisProxy.Set(proxyFrozen)
	timed(t, "frozen redis: delivery read", func() httpResult {
		return deliv.do(http.MethodGet, "/delivery/api/branches/4/objects/outage?lang=de-DE&redis=frozen", "")
	}, http.StatusOK)
	// The cache failed a moment ago: the next read does not wait for it
	// again (without the cooldown every cache call costs cacheTimeout).
	if r := timed(t, "frozen redis: next delivery read", func() httpResult {
		return deliv.do(http.MethodGet, "/delivery/api/branches/4/objects/outage?lang=de-DE&redis=frozen2", "")
	}, http.StatusOK); r.took >= cacheTimeout {
		t.Errorf("a read right after a cache failure took %v: it waited for the cache again", r.took)
	}
	timed(t, "frozen redis: delivery readyz", func() httpResult { return deliv.do(http.MethodGet, "/readyz", "") },
		http.StatusOK)
	// Both away: Delivery has nothing to serve from and says so.
	esProxy.Set(proxyFrozen)
	timed(t, "frozen redis and search: delivery readyz", func() httpResult { return deliv.do(http.MethodGet, "/readyz", "") },
		http.StatusServiceUnavailable)
	redisProxy.Set(proxyForward)
	esProxy.Set(proxyForward)
	pollUntil(t, 10*time.Second, "delivery read after recovery", func() bool {
		return deliv.do(http.MethodGet, "/delivery/api/branches/4/objects/outage?lang=de-DE&redis=back", "").code == http.StatusOK
	})

	// A Delivery replica starting while Redis is away serves uncached.
	redisProxy.Set(proxyRefusing)
	late := serve(viaProxies(TargetDelivery))
	timed(t, "redis down at start: delivery read", func() httpResult {
		return late.do(http.MethodGet, "/delivery/api/branches/4/objects/outage?lang=de-DE&redis=down-at-start", "")
	}, http.StatusOK)
	redisProxy.Set(proxyForward)

	// PostgreSQL frozen under a Management process: its reads answer 503
	// within the store deadline and it is not ready; then it recovers.
	pgProxy := newFaultProxy(t, hostPort(t, base.Store.URL))
	mcfg := config(TargetManagement)
	pu, _ := url.Parse(mcfg.Store.URL)
	pu.Host = pgProxy.Addr
	mcfg.Store.URL = pu.String()
	mcfg.Timeouts.Store, mcfg.Timeouts.Ready = 300*time.Millisecond, 500*time.Millisecond
	mgmt2 := serve(mcfg)
	const read = "/apis/cms/v1/branches/4/objects/outage"
	mgmt2.must(http.StatusOK, http.MethodGet, read, "") // also caches the login
	pgProxy.Set(proxyFrozen)
	expectUnavailable(t, "frozen store: management read", func() httpResult { return mgmt2.do(http.MethodGet, read, "") })
	stranger := httpClient{t: t, base: mgmt2.base, user: "admin", pass: "not-in-the-login-cache"}
	expectUnavailable(t, "frozen store: login", func() httpResult { return stranger.do(http.MethodGet, read, "") })
	timed(t, "frozen store: management readyz", func() httpResult { return mgmt2.do(http.MethodGet, "/readyz", "") },
		http.StatusServiceUnavailable)
	pgProxy.Set(proxyForward)
	pollUntil(t, 10*time.Second, "management read after recovery", func() bool {
		return mgmt2.do(http.MethodGet, read, "").code == http.StatusOK
	})
}

// expectUnavailable asserts a 503 ProblemDetails with Retry-After within
// outageBound.
func expectUnavailable(t *testing.T, what string, call func() httpResult) {
	t.Helper()
	r := timed(t, what, call, http.StatusServiceUnavailable)
	if r.header.Get("Retry-After") == "" {
		t.Errorf("%s: no Retry-After", what)
	}
	var pd struct {
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
		json.Unmarshal(r.body, &pd) != nil || pd.Status != http.StatusServiceUnavailable {
		t.Errorf("%s: not a 503 ProblemDetails: %s %s", what, r.header.Get("Content-Type"), r.body)
	}
}

// timedResult is a call's answer and how long it took.
type timedResult struct {
	httpResult
	took time.Duration
}

// timed calls once and asserts the status and that it came within
// outageBound.
func timed(t *testing.T, what string, call func() httpResult, want int) timedResult {
	t.Helper()
	start := time.Now()
	r := timedResult{httpResult: call()}
	took := time.Since(start)
	if r.code != want {
		t.Errorf("%s = %d, want %d: %s", what, r.code, want, r.body)
	}
	if took > outageBound {
		t.Errorf("%s took %v, want < %v", what, took.Round(time.Millisecond), outageBound)
	}
	t.Logf("%s: %d in %v", what, r.code, took.Round(time.Millisecond))
	r.took = took
	return r
}

func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("component URL %q: %v", raw, err)
	}
	return u.Host
}
