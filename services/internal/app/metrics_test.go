package app

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPipelineMetrics: /metrics counts the outbox, the indexer (and its
// lag, also on /readyz) and the Delivery caches — including HTTP cache
// hits, which never reach gRPC.
func TestPipelineMetrics(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "metricsType", v(1000, 201, "Metrics")))
	path := "/delivery/api/branches/4/objects/metricsType"
	admin.must(http.StatusOK, http.MethodGet, path, "", "X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10))
	first := admin.must(http.StatusOK, http.MethodGet, path, "") // built, then kept by the HTTP cache
	admin.must(http.StatusOK, http.MethodGet, path, "")          // HTTP cache hit
	admin.must(http.StatusNotModified, http.MethodGet, path, "", "If-None-Match", first.header.Get("ETag"))

	want := map[string]float64{
		"cms_outbox_published_total":                                            1,
		`cms_indexer_events_total{result="applied"}`:                            1,
		`cms_delivery_cache_requests_total{layer="http",result="hit"}`:          1,
		`cms_delivery_cache_requests_total{layer="http",result="not_modified"}`: 1,
		`cms_delivery_cache_requests_total{layer="http",result="miss"}`:         1,
		`cms_delivery_cache_requests_total{layer="grpc",result="miss"}`:         1,
		"cms_delivery_invalidations_total":                                      1,
		"cms_delivery_cache_shared_builds_total":                                0,
		"cms_live_events_released_total":                                        1, // the hub runs with no subscriber too
	}
	var got map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = scrape(t, base)
		missing := ""
		for name, min := range want {
			if got[name] < min {
				missing += " " + name
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics below their minimum:%s\n(got %v)", missing, got)
		}
	}
	if got[`cms_indexer_events_total{result="failed"}`] != 0 || got[`cms_indexer_events_total{result="dropped"}`] != 0 {
		t.Errorf("indexer failures: %v", got)
	}
	for _, gauge := range []string{"cms_indexer_lag_events", "cms_indexer_lag_seconds", "cms_live_subscribers", "cms_delivery_reads_waiting"} {
		if v, ok := got[gauge]; !ok || v < 0 {
			t.Errorf("%s = %v (exported: %v), want a value >= 0", gauge, v, ok)
		}
	}
	// The indexer's lag is a /readyz detail.
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), "\nindexer: lag ") {
		t.Errorf("/readyz = %d %q, want 200 with the indexer's lag", resp.StatusCode, body.String())
	}
}

// scrape reads the cms_* samples of /metrics.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	out := map[string]float64{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "cms_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if f, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = f
		}
	}
	return out
}
