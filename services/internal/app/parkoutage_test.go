package app

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSearchOutageLongerThanParkThreshold cuts the indexer's connection
// to the real Elasticsearch (a fault proxy refusing connections, as a
// stopped Elasticsearch does) for longer than the indexer takes to park a
// failing event (indexerMaxAttempts failed applies, the first retry 1 s
// later), writes one object during the outage and restores the
// connection: the indexer waits for the engine instead of parking (it is
// not ready meanwhile), and the object becomes visible in Delivery
// (read-your-writes) and Index, with nothing parked.
func TestSearchOutageLongerThanParkThreshold(t *testing.T) {
	config, _ := isolatedDistributed(t, "parkoutage")
	base := config("")
	esProxy := newFaultProxy(t, hostPort(t, base.Search.URL))
	serve := func(cfg Config) httpClient {
		return httpClient{t: t, base: "http://" + startConfigured(t, cfg).HTTPAddr(), user: "admin", pass: "test-password"}
	}
	const maxAttempts = 2
	// Park threshold with the default 1 s first retry: 2 failed applies.
	const parkThreshold = time.Second
	icfg := config(TargetIndexer)
	icfg.Search.URL = "http://" + esProxy.Addr
	icfg.Timeouts.Search, icfg.Timeouts.Ready = 300*time.Millisecond, 500*time.Millisecond
	icfg.IndexerMaxAttempts = maxAttempts
	mgmt := serve(config(TargetManagement))
	ixr := serve(icfg)
	deliv := serve(config(TargetDelivery))
	index := serve(config(TargetIndex))

	// Before the outage: the indexes exist and the indexer has applied.
	w0 := mgmt.create(obj(0, "parkoutage-before", v(1000, 201, "Before")))
	deliv.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects/parkoutage-before", "",
		"X-Cms-Min-Version", strconv.FormatInt(w0.Transaction.ID, 10), "X-Cms-Max-Wait", "20s")
	failedBefore := scrape(t, ixr.base)[`cms_indexer_events_total{result="failed"}`]

	esProxy.Set(proxyRefusing)
	cut := time.Now()
	w := mgmt.create(obj(0, "parkoutage", v(1000, 201, "Parkoutage")))
	// The indexer failed as often as it takes to park (or parked), and
	// the outage lasts longer than the park threshold.
	pollUntil(t, 60*time.Second, "failed applies during the outage", func() bool {
		m := scrape(t, ixr.base)
		return m[`cms_indexer_events_total{result="failed"}`] >= failedBefore+maxAttempts ||
			m[`cms_indexer_events_total{result="parked"}`] > 0
	})
	for time.Since(cut) < 3*parkThreshold {
		time.Sleep(100 * time.Millisecond)
	}
	if r := ixr.do(http.MethodGet, "/readyz", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("indexer /readyz during the outage = %d, want 503: %s", r.code, r.body)
	}
	m := scrape(t, ixr.base)
	outage := time.Since(cut)
	esProxy.Set(proxyForward)
	back := time.Now()
	t.Logf("outage %v: failed applies %v, parked %v", outage.Round(time.Millisecond),
		m[`cms_indexer_events_total{result="failed"}`]-failedBefore, m[`cms_indexer_events_total{result="parked"}`])

	r := deliv.do(http.MethodGet, "/delivery/api/branches/4/objects/parkoutage", "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	visible := time.Since(back)
	if r.code != http.StatusOK {
		t.Fatalf("delivery read-your-writes after the outage = %d after %v: %s (parked: %v)", r.code,
			visible.Round(time.Millisecond), r.body, scrape(t, ixr.base)[`cms_indexer_events_total{result="parked"}`])
	}
	t.Logf("visible in Delivery %v after Elasticsearch came back", visible.Round(time.Millisecond))
	s := index.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objects",
		`{"filter":{"searchPhrase":"parkoutage"},"minChangeTrackingVersion":`+strconv.FormatInt(w.Transaction.ID, 10)+`}`)
	if !strings.Contains(string(s.body), strconv.FormatInt(w.CreatedObjectIDs[0], 10)) {
		t.Errorf("index search after the outage misses object %d: %s", w.CreatedObjectIDs[0], s.body)
	}
	if p := scrape(t, ixr.base)[`cms_indexer_events_total{result="parked"}`]; p != 0 {
		t.Errorf("parked = %v, want 0: an outage is no reason to park", p)
	}
	if g, ok := scrape(t, ixr.base)["cms_indexer_parked_events"]; !ok || g != 0 {
		t.Errorf("cms_indexer_parked_events = %v (exported: %v), want 0", g, ok)
	}
	pollUntil(t, 10*time.Second, "indexer ready after the outage", func() bool {
		return ixr.do(http.MethodGet, "/readyz", "").code == http.StatusOK
	})
}
