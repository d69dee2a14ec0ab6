package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRenderingTargetOnItsStore: a Rendering process checks read grants
// against the store it renders from, so a branch and a grant written a
// moment ago count at once, also with no indexer running (it resolved
// them from the index: the reader got 404 for a branch the index did not
// show yet); it reads binary proxy objects from the store too, and opens
// neither the search engine nor the cache (both unreachable here); and its
// /readyz reports not ready while that store is away (it checked
// nothing), then ready again.
func TestRenderingTargetOnItsStore(t *testing.T) {
	config, _ := isolatedDistributed(t, "rendertarget")
	base := config("")
	pgProxy := newFaultProxy(t, hostPort(t, base.Store.URL))
	serve := func(cfg Config) httpClient {
		return httpClient{t: t, base: "http://" + startConfigured(t, cfg).HTTPAddr(), user: "admin", pass: "test-password"}
	}
	mgmt := serve(config(TargetManagement)) // no indexer: the index never shows the branch
	rcfg := config(TargetRendering)
	pu, _ := url.Parse(rcfg.Store.URL)
	pu.Host = pgProxy.Addr
	rcfg.Store.URL = pu.String()
	rcfg.Timeouts.Store, rcfg.Timeouts.Ready = 300*time.Millisecond, 500*time.Millisecond
	// Nothing listens on port 1: a process that opened them would fail or
	// be unready.
	rcfg.Search.URL, rcfg.Cache.URL = "http://127.0.0.1:1", "redis://127.0.0.1:1/0"
	render := serve(rcfg)

	r := mgmt.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
		`{"comment":"branch","values":[`+v(1000, 201, "Alpha")+`,`+v(4000, 0, 4)+`]}`)
	var br struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &br); err != nil || br.Meta.ID == 0 {
		t.Fatalf("create branch: %s", r.body)
	}
	mgmt.create(obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, br.Meta.ID)))
	reader := httpClient{t: t, base: render.base, user: "reader", pass: "reader-pw"}
	sheet := func(branch int64) string {
		return fmt.Sprintf("/apis/rendering/v1/branches/%d/css/app-styles.css", branch)
	}
	reader.must(http.StatusOK, http.MethodGet, sheet(br.Meta.ID), "")
	reader.must(http.StatusForbidden, http.MethodGet, sheet(4), "")
	// An unknown branch answers a reader as one without the grant (no
	// existence oracle, docs/api-reference.md §1); an administrator learns
	// that it does not exist.
	reader.must(http.StatusForbidden, http.MethodGet, sheet(987654), "")
	render.must(http.StatusNotFound, http.MethodGet, sheet(987654), "")

	// A binary proxy object on the default branch, inherited by Alpha,
	// served at once (no index holds it).
	data := []byte("not really a png")
	up := filesClient{t: t, base: mgmt.base}.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, data, "Extension", "png", "Commit", "true")
	if up.GUID == nil {
		t.Fatalf("upload: %+v", up)
	}
	typ := mgmt.create(obj(0, "picture", v(1000, 201, "Picture"), v(5009, 0, true))).CreatedObjectIDs[0]
	bpo := mgmt.create(obj(typ, "logo", v(1000, 201, "Logo"), v(11000, 0, *up.GUID), v(11005, 0, ".png"))).CreatedObjectIDs[0]
	got := reader.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/rendering/v1/branches/%d/files/%d", br.Meta.ID, bpo), "")
	if string(got.body) != string(data) || got.header.Get("Content-Type") != "image/png" {
		t.Errorf("BPO file: %q %s", got.body, got.header.Get("Content-Type"))
	}
	reader.must(http.StatusNotFound, http.MethodGet, fmt.Sprintf("/apis/rendering/v1/branches/%d/files/%d", br.Meta.ID, typ), "")

	render.must(http.StatusOK, http.MethodGet, "/readyz", "")
	pgProxy.Set(proxyFrozen)
	timed(t, "frozen store: rendering readyz", func() httpResult { return render.do(http.MethodGet, "/readyz", "") },
		http.StatusServiceUnavailable)
	expectUnavailable(t, "frozen store: rendering sheet", func() httpResult { return render.do(http.MethodGet, sheet(4), "") })
	pgProxy.Set(proxyForward)
	pollUntil(t, 10*time.Second, "rendering ready after recovery", func() bool {
		return render.do(http.MethodGet, "/readyz", "").code == http.StatusOK
	})
}

// TestTargetOpens: what each target opens and checks comes from the one
// target table; Rendering opens no cache component (its render cache is
// memory of its own) and no search engine (it reads the store only), and
// its readiness checks the store.
func TestTargetOpens(t *testing.T) {
	for _, c := range []struct {
		target string
		uses   map[string]bool
		ready  [][]string
	}{
		{TargetRendering, map[string]bool{"store": true, "events": true, "blobs": true, "search": false, "cache": false}, [][]string{{"store"}}},
		{TargetDelivery, map[string]bool{"cache": true, "search": true}, [][]string{{"cache", "search"}}},
		{TargetIndex, map[string]bool{"search": true, "store": true, "cache": false, "events": false}, [][]string{{"search"}}},
	} {
		cfg := DistributedConfig()
		cfg.Target = c.target
		for comp, want := range c.uses {
			if got := cfg.uses(comp); got != want {
				t.Errorf("%s uses %s = %v, want %v", c.target, comp, got, want)
			}
		}
		if got := cfg.readyGroups(); fmt.Sprint(got) != fmt.Sprint(c.ready) {
			t.Errorf("%s readiness %v, want %v", c.target, got, c.ready)
		}
	}
	if len(targetTable) != len(AllTargets) {
		t.Fatalf("target table has %d rows, AllTargets %d", len(targetTable), len(AllTargets))
	}
	for i, s := range targetTable {
		if s.name != AllTargets[i] {
			t.Errorf("target table row %d is %q, want %q (AllTargets order)", i, s.name, AllTargets[i])
		}
	}
}

// The README's target table lies between these lines.
const (
	targetsBegin = "<!-- targets: generated from services/internal/app targetTable, checked by TestTargetTableDocumented -->\n"
	targetsEnd   = "<!-- end of targets -->\n"
)

// TestTargetTableDocumented: the README's target table is the one in
// code (targetTable). CMS_UPDATE_TARGETS=1 rewrites it.
func TestTargetTableDocumented(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "operations.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, targetsBegin), strings.Index(s, targetsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no target table between %q and %q", targetsBegin, targetsEnd)
	}
	want := targetTableMarkdown()
	if got := s[i+len(targetsBegin) : j]; got != want {
		if os.Getenv("CMS_UPDATE_TARGETS") == "1" {
			if err := os.WriteFile(path, []byte(s[:i+len(targetsBegin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md target table is stale; run CMS_UPDATE_TARGETS=1 go test ./services/internal/app -run TestTargetTableDocumented\ngot:\n%s\nwant:\n%s", got, want)
	}
}
