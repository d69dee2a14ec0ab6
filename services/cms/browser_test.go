package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
	"github.com/cmsplatform/cms/services/internal/app"
)

// TestBrowserLiveList drives the example page examples/live-list in a real
// headless Chromium (Debian's package, CMS_CHROMIUM): `cms run` serves the
// API on one origin, an httptest server serves the page on another, and
// the API's corsOrigins lists the page's origin. The page lists a type's
// objects through Delivery with Basic auth and follows the change stream
// (fetch + ReadableStream, as EventSource cannot send Authorization). The
// test checks that the browser sent CORS preflights and the API allowed
// them, that the page lists the objects, and that a Management update and
// a create show on the page without a reload within browserChangeWait.
// It runs on both setups: embedded (cms run's defaults) and distributed
// (the same process on PostgreSQL, NATS, Elasticsearch and Redis).
func TestBrowserLiveList(t *testing.T) {
	chromium := testenv.Tool(t, testenv.Chromium)
	t.Run("embedded", func(t *testing.T) {
		browserLiveList(t, chromium, []string{app.EngineSQLite, app.EngineEmbeddedNATS, app.EngineBleve, app.EngineMemory, app.EngineFS})
	})
	t.Run("distributed", func(t *testing.T) {
		browserLiveList(t, chromium, []string{app.EnginePostgres, app.EngineNATS, app.EngineElasticsearch, app.EngineRedis, app.EngineNATSObjects},
			distributedEnv(t)...)
	})
}

// distributedEnv switches `cms run` to the real components (the engines of
// `cms serve`): a fresh PostgreSQL database, and on NATS, Elasticsearch and
// Redis a namespace of its own (the change stream, index names and cache
// keys), so other test runs on the same servers cannot feed or steal its
// events. What the process created there is deleted when the test ends,
// after the process (cleanups run last first; startCMS registers later).
func distributedEnv(t *testing.T) []string {
	t.Helper()
	pgURL := testenv.PostgresDatabase(t)
	esURL := testenv.URL(t, testenv.ElasticsearchURL)
	redisURL := testenv.URL(t, testenv.RedisURL)
	natsURL := testenv.URL(t, testenv.NATSURL)
	// The bus creates the namespace's stream and deletes it at the end.
	_, prefix := setups.NATSBus(t, "browsertest", "browser-test")
	t.Cleanup(func() {
		testenv.DeleteIndexes(t, esURL, prefix)
		testenv.DeleteRedisKeys(t, redisURL, prefix)
	})
	return []string{
		"CMS_STORE_ENGINE=" + app.EnginePostgres, "CMS_STORE_URL=" + pgURL,
		"CMS_EVENTS_ENGINE=" + app.EngineNATS, "CMS_EVENTS_URL=" + natsURL, "CMS_EVENTS_PREFIX=" + prefix,
		"CMS_SEARCH_ENGINE=" + app.EngineElasticsearch, "CMS_SEARCH_URL=" + esURL, "CMS_SEARCH_PREFIX=" + prefix,
		"CMS_CACHE_ENGINE=" + app.EngineRedis, "CMS_CACHE_URL=" + redisURL, "CMS_CACHE_PREFIX=" + prefix,
		"CMS_BLOBS_ENGINE=" + app.EngineNATSObjects, "CMS_BLOBS_PREFIX=" + prefix,
	}
}

// browserLiveList is the test on `cms run` with the settings env; the
// process must report the engines engines (store, events, search, cache,
// blobs) in its "cms serving" line.
func browserLiveList(t *testing.T, chromium string, engines []string, env ...string) {
	started := time.Now()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pageSrv := httptest.NewServer(http.FileServer(http.Dir("../../examples/live-list")))
	t.Cleanup(pageSrv.Close)
	origin := pageSrv.URL
	p := startCMS(t, bin, t.TempDir(), append([]string{"CMS_CORS_ORIGINS=" + origin}, env...)...)
	if strings.EqualFold(p.base, origin) {
		t.Fatalf("page and API share the origin %s: no CORS would be exercised", origin)
	}
	if got := p.log.engines(); !slices.Equal(got, engines) {
		t.Fatalf("cms run serves on the engines %q (store, events, search, cache, blobs), want %q", got, engines)
	}
	typeID, ids, tx := setupLiveList(t, p.base)
	// The page loads the list once its stream runs; the first objects must
	// be in the index by then, else their changes happened before it.
	waitDelivery(t, p.base, tx)
	ready := time.Since(started)

	ctx := browserContext(t, chromium)
	nl := &netLog{origin: origin}
	if err := chromedp.Listen(ctx, nl.record); err != nil {
		t.Fatal(err)
	}
	step := func(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage: %s\nnetwork: %s", what, err, pageState(ctx), nl.summary())
		}
	}
	step("open the page", 10*time.Second,
		chromedp.Navigate(origin+"/index.html"),
		chromedp.SetValue(chromedp.ID("base"), p.base),
		chromedp.SetValue(chromedp.ID("user"), "admin"),
		chromedp.SetValue(chromedp.ID("password"), crashPassword),
		chromedp.SetValue(chromedp.ID("type"), browserType),
		// Marks this document: a reload would lose it.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool]("window.liveListDocument = true")(ctx, tg)
			return err
		}),
		chromedp.Click(chromedp.ID("connect")),
	)
	listed := time.Now()
	step("list the objects", browserChangeWait,
		waitPage(`names().length === 2 && names().includes("First") && names().includes("Second") && state() === "live"`))
	t.Logf("page lists the 2 objects %v after Connect", time.Since(listed).Round(time.Millisecond))

	// An update of the first object and a new third one, through Management.
	wrote := time.Now()
	write(t, http.MethodPatch, p.base, fmt.Sprintf(`{"meta":{"id":%d,"typeRef":%d},"values":[%s]}`, ids[0], typeID, value(1000, 201, "First, edited")))
	step("show the update", browserChangeWait,
		waitPage(`names().includes("First, edited") && !names().includes("First") && names().length === 2`))
	updated := time.Since(wrote)
	wrote = time.Now()
	write(t, http.MethodPost, p.base, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, typeID, value(1000, 201, "Third")))
	step("show the created object", browserChangeWait, waitPage(`names().includes("Third") && names().length === 3`))
	created := time.Since(wrote)

	// Resume: the page reconnects through a proxy whose connections the
	// test cuts; a change written while the stream is down arrives once,
	// replayed after the Last-Event-ID the page sends when it reconnects.
	target, err := url.Parse(p.base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target)) // flushes event streams at once
	t.Cleanup(func() {
		// Close waits for the requests in flight; the page's stream would
		// never end: refuse new connections, cut the open ones, then close.
		_ = proxy.Listener.Close()
		proxy.CloseClientConnections()
		proxy.Close()
	})
	step("reconnect through the proxy", browserChangeWait,
		chromedp.SetValue(chromedp.ID("base"), proxy.URL),
		chromedp.Click(chromedp.ID("connect")),
		waitPage(fmt.Sprintf(`names().length === 3 && state() === "live" && status().includes(%q) && changes() === 0`, proxy.URL+"/")))
	txA := write(t, http.MethodPatch, p.base, fmt.Sprintf(`{"meta":{"id":%d,"typeRef":%d},"values":[%s]}`, ids[1], typeID, value(1000, 201, "Second, edited")))
	step("show the change before the cut", browserChangeWait,
		waitPage(fmt.Sprintf(`names().includes("Second, edited") && version() === "%d"`, txA)))
	proxy.CloseClientConnections()
	cut := time.Now()
	txB := write(t, http.MethodPost, p.base, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, typeID, value(1000, 201, "Fourth")))
	step("show the change written while the stream was down", browserChangeWait,
		waitPage(fmt.Sprintf(`names().includes("Fourth") && names().length === 4 && version() === "%d"`, txB)))
	resumed := time.Since(cut)
	var counted int
	step("count the changes", 5*time.Second, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		counted, err = chromedp.Evaluate[int](`Number(document.getElementById("changes").textContent)`)(ctx, tg)
		return err
	}))
	if counted != 2 {
		t.Errorf("the page counted %d changes since it reconnected through the proxy, want 2 (%d before the cut, %d after): lost or duplicated", counted, txA, txB)
	}
	if got := nl.resumedAfter(proxy.URL); !slices.Equal(got, []string{fmt.Sprint(txA)}) {
		t.Errorf("Last-Event-ID of the reconnections through the proxy: %q, want [%d]", got, txA)
	}

	var same bool
	step("stay on the same document", 5*time.Second, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		same, err = chromedp.Evaluate[bool]("window.liveListDocument === true")(ctx, tg)
		return err
	}))
	if !same {
		t.Fatalf("the page was reloaded: the document lost its mark")
	}
	nl.check(t, 1, "/delivery/api/branches/draft/changes", "/delivery/api/branches/draft/types/"+browserType+"/objects")
	t.Logf("update on the page %v after Management answered, create %v; after a cut stream a change written meanwhile shows %v later (retry 2 s); %s; total %v (cms ready and model written in %v)",
		updated.Round(time.Millisecond), created.Round(time.Millisecond), resumed.Round(time.Millisecond), nl.summary(),
		time.Since(started).Round(time.Millisecond), ready.Round(time.Millisecond))
}

// engines returns the engines of store, events, search, cache and blobs
// of the process's "cms serving" line (nil before it).
func (l *procLog) engines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		var line struct {
			Msg                                 string
			Store, Events, Search, Cache, Blobs string
		}
		if json.Unmarshal(b, &line) == nil && line.Msg == "cms serving" {
			return []string{line.Store, line.Events, line.Search, line.Cache, line.Blobs}
		}
	}
	return nil
}

// write sends one object to Management (POST creates, PATCH updates) and
// returns the transaction.
func write(t *testing.T, method, base, obj string) int64 {
	t.Helper()
	return writeOn(t, method, base, 4, obj)
}

// writeOn is write on branch.
func writeOn(t *testing.T, method, base string, branch int64, obj string) int64 {
	t.Helper()
	want := http.StatusOK
	if method == http.MethodPost {
		want = http.StatusCreated
	}
	var w writeAnswer
	b := mustCall(t, want, method, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch), `{"objects":[`+obj+`]}`)
	if err := json.Unmarshal(b, &w); err != nil || w.Transaction.ID == 0 {
		t.Fatalf("%s objects: %v: %s", method, err, b)
	}
	return w.Transaction.ID
}

const (
	browserType = "liveitem"
	// browserChangeWait bounds each wait for the page (listing, a change).
	browserChangeWait = 10 * time.Second
	// browserStartWait bounds starting Chromium and opening its tab.
	browserStartWait = 30 * time.Second
)

// setupLiveList creates the type liveitem and two objects, First and
// Second, and returns the type's id, the objects' ids and the transaction.
func setupLiveList(t *testing.T, base string) (typeID int64, ids []int64, tx int64) {
	t.Helper()
	typ := `{"meta":{"typeRef":0,"apiIdentifier":"` + browserType + `"},"values":[` + value(1000, 201, "Live item") + "]}"
	var w writeAnswer
	b := mustCall(t, http.StatusCreated, http.MethodPost, base+"/apis/cms/v1/branches/4/objects", `{"objects":[`+typ+`]}`)
	if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != 1 {
		t.Fatalf("create type: %v: %s", err, b)
	}
	typeID = w.CreatedObjectIDs[0]
	objs := fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s]},{"meta":{"typeRef":%d},"values":[%s]}]}`,
		typeID, value(1000, 201, "First"), typeID, value(1000, 201, "Second"))
	w = writeAnswer{}
	b = mustCall(t, http.StatusCreated, http.MethodPost, base+"/apis/cms/v1/branches/4/objects", objs)
	if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != 2 {
		t.Fatalf("create objects: %v: %s", err, b)
	}
	return typeID, w.CreatedObjectIDs, w.Transaction.ID
}

// waitDelivery waits (read-your-writes) until Delivery shows version tx.
func waitDelivery(t *testing.T, base string, tx int64) {
	t.Helper()
	u := base + "/delivery/api/branches/4/types/" + browserType + "/objects?take=10"
	code, b, err := call(http.DefaultClient, http.MethodGet, u, "", "X-Cms-Min-Version", fmt.Sprint(tx), "X-Cms-Max-Wait", "10s")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s at version %d = %d %v: %s", u, tx, code, err, b)
	}
}

// browserContext starts Chromium headless for the test (the studio tests'
// browser, studioBrowser); it ends with it.
func browserContext(t *testing.T, chromium string) context.Context {
	t.Helper()
	return studioBrowser(t, chromium)
}

// waitPage waits until cond (JavaScript, with names() the listed names,
// state() and status() the status and its text, changes() the changes
// counted and version() the last change version) holds, or until the
// page reports an error.
func waitPage(cond string) chromedp.Action[chromedp.Void] {
	expr := `(() => {
		const names = () => [...document.querySelectorAll("#objects li")].map((li) => li.firstChild.textContent);
		const state = () => document.getElementById("status").dataset.state;
		const status = () => document.getElementById("status").textContent;
		const changes = () => Number(document.getElementById("changes").textContent);
		const version = () => document.getElementById("version").textContent;
		return state() === "error" || (` + cond + `);
	})()`
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := chromedp.Poll[bool](expr, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0))(ctx, tg); err != nil {
			return err
		}
		st, err := chromedp.Evaluate[string](`document.getElementById("status").dataset.state + ": " + document.getElementById("status").textContent`)(ctx, tg)
		if err != nil {
			return err
		}
		if strings.HasPrefix(st, "error:") {
			return fmt.Errorf("the page reports %s", st)
		}
		return nil
	})
}

// pageState describes the page for a failure message.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent + " | " + document.getElementById("objects").innerText`))
	if err != nil {
		return err.Error()
	}
	return s
}

// netLog records what the browser did on the network: the CORS
// preflights it sent and how the API answered them, and failed requests.
type netLog struct {
	origin string

	mu         sync.Mutex
	preflights map[network.RequestID]*preflight
	urls       map[network.RequestID]string // every other request
	streams    []stream                     // requests of the change stream, in order
	failures   []string                     // failed requests, except change streams cut
	cuts       int                          // change streams that failed
}

type stream struct {
	url         string
	lastEventID string
}

type preflight struct {
	url     string
	headers string // Access-Control-Request-Headers
	status  int64
	allowed string // Access-Control-Allow-Origin of the answer
}

// record is the chromedp listener: it runs on the browser's read loop, so
// it only stores.
func (n *netLog) record(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.preflights == nil {
		n.preflights = map[network.RequestID]*preflight{}
		n.urls = map[network.RequestID]string{}
	}
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		switch {
		case ev.Type == network.ResourceTypePreflight || ev.Request.Method == http.MethodOptions:
			n.preflights[ev.RequestID] = &preflight{url: ev.Request.URL, headers: header(ev.Request.Headers, "Access-Control-Request-Headers")}
		case ev.Type == network.ResourceTypeFetch:
			n.urls[ev.RequestID] = ev.Request.URL
			if strings.Contains(ev.Request.URL, "/changes?") {
				n.streams = append(n.streams, stream{url: ev.Request.URL, lastEventID: header(ev.Request.Headers, "Last-Event-ID")})
			}
		}
	case *network.EventResponseReceived:
		if pf := n.preflights[ev.RequestID]; pf != nil {
			pf.status = ev.Response.Status
			pf.allowed = header(ev.Response.Headers, "Access-Control-Allow-Origin")
		}
	case *network.EventLoadingFailed:
		u := n.urls[ev.RequestID]
		switch {
		case ev.Canceled: // the page aborted it (a new Connect), or the test ends
		case strings.Contains(u, "/changes?") && ev.CorsErrorStatus == nil:
			n.cuts++
		default:
			s := u + ": " + ev.ErrorText
			if ev.CorsErrorStatus != nil {
				s += " (CORS: " + string(ev.CorsErrorStatus.CorsError) + ")"
			}
			n.failures = append(n.failures, s)
		}
	}
}

// resumedAfter returns the Last-Event-ID of each change stream request to
// base that sent one.
func (n *netLog) resumedAfter(base string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ids []string
	for _, s := range n.streams {
		if strings.HasPrefix(s.url, base+"/") && s.lastEventID != "" {
			ids = append(ids, s.lastEventID)
		}
	}
	return ids
}

// check requires a preflight, allowed for the page's origin, for each path
// (the browser preflights every URL it sends Authorization to), no failed
// request and cuts change streams cut.
func (n *netLog) check(t *testing.T, cuts int, paths ...string) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, path := range paths {
		found := false
		for _, pf := range n.preflights {
			if !strings.Contains(pf.url, path) {
				continue
			}
			found = true
			if pf.status != http.StatusNoContent || pf.allowed != n.origin || !strings.Contains(strings.ToLower(pf.headers), "authorization") {
				t.Errorf("preflight of %s: status %d, Access-Control-Allow-Origin %q (want 204, %q), requested headers %q (want authorization)",
					pf.url, pf.status, pf.allowed, n.origin, pf.headers)
			}
		}
		if !found {
			t.Errorf("no CORS preflight for %s; preflights seen: %d", path, len(n.preflights))
		}
	}
	if len(n.failures) > 0 {
		t.Errorf("failed requests: %v", n.failures)
	}
	if n.cuts != cuts {
		t.Errorf("%d change streams failed, want %d (the ones the test cut)", n.cuts, cuts)
	}
}

func (n *netLog) summary() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ok int
	for _, pf := range n.preflights {
		if pf.status == http.StatusNoContent {
			ok++
		}
	}
	return fmt.Sprintf("%d fetches (%d change streams, %d cut), %d CORS preflights (%d answered 204), failures %v",
		len(n.urls), len(n.streams), n.cuts, len(n.preflights), ok, n.failures)
}

// header reads a header case-insensitively (CDP keeps the wire's case).
func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return ""
}
