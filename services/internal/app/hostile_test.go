package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/errkind"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// The hostile-input suite (issue 11): a catalogue of malformed, oversized,
// deeply nested, badly encoded, injection and traversal requests and auth
// cases, derived from the 80 declared RPCs (hostile_catalogue_test.go),
// replayed against the whole system (`cms run`) and, with the real
// components configured, against the distributed services. Every answer is
// a 4xx ProblemDetails, or a 2xx/304 where the input is acceptable; never
// a 5xx (nor a 501 to a valid request: every operation is built),
// never slower than hostileTimeout, and the heap grows by less than
// hostileHeapGrowth over the whole catalogue.
const (
	hostileTimeout     = 10 * time.Second
	hostileHeapGrowth  = 256 << 20
	hostileConcurrency = 8
)

// hostileSystems are the setups the catalogue runs against. start returns
// base, which routes a path to the process serving it, and the base URL of
// the process running the indexer.
var hostileSystems = []struct {
	name  string
	start func(t *testing.T) (func(path string) string, string)
}{
	{"embedded", func(t *testing.T) (func(string) string, string) {
		base, _ := edgeServer(t, hostileEdge)
		return func(string) string { return base }, base
	}},
	{"distributed", func(t *testing.T) (func(string) string, string) {
		config, _ := isolatedDistributed(t, "hostile")
		serve := func(target string) string {
			cfg := config(target)
			hostileEdge(&cfg)
			return "http://" + startConfigured(t, cfg).HTTPAddr()
		}
		mgmt := serve(TargetManagement)
		indexer := serve(TargetIndexer)
		deliv, index, rend := serve(TargetDelivery), serve(TargetIndex), serve(TargetRendering)
		return func(path string) string {
			switch {
			case strings.HasPrefix(path, "/delivery/"):
				return deliv
			case strings.HasPrefix(path, "/apis/index/"):
				return index
			case strings.HasPrefix(path, "/apis/rendering/"):
				return rend
			}
			return mgmt
		}, indexer
	}},
}

// hostileEdge lifts login throttling (the catalogue sends hundreds of wrong
// passwords from one address, each must be a plain 401) and lets password
// checks queue instead of answering 503.
func hostileEdge(c *Config) {
	c.Edge.LoginUserFailures, c.Edge.LoginAddrFailures = 1<<20, 1<<20
	c.Edge.PasswordCheckWait, c.Edge.PasswordChecks = time.Minute, 2
}

// TestHostileInputs replays the catalogue on every system.
func TestHostileInputs(t *testing.T) {
	for _, sys := range hostileSystems {
		t.Run(sys.name, func(t *testing.T) {
			w := newHostileWorld(t, sys.start)
			runHostile(t, w, hostileCatalogue(t, w))
		})
	}
}

// expect is what a case may answer besides the rules every case obeys.
type expect struct {
	desc string
	ok   func(code int) bool
	// before: decided before any handler (authentication, edge checks),
	// so a 501 operation must answer it too.
	before bool
	// challenge: a 401 carries WWW-Authenticate: Basic.
	challenge bool
	// retryLater: a 503 with Retry-After is a legitimate answer (a
	// read-your-writes version the index has not reached in time).
	retryLater bool
}

// only accepts exactly the codes given.
func only(codes ...int) expect {
	return expect{desc: fmt.Sprint(codes), ok: func(c int) bool { return slices.Contains(codes, c) }}
}

// clientError accepts any 4xx.
func clientError() expect {
	return expect{desc: "4xx", ok: func(c int) bool { return c >= 400 && c < 500 }}
}

// acceptable accepts 2xx, 304 and 4xx: the input may be legitimate.
func acceptable() expect {
	return expect{desc: "2xx/304/4xx", ok: func(c int) bool { return c >= 200 && c < 300 || c == 304 || c >= 400 && c < 500 }}
}

func (e expect) early() expect { e.before = true; return e }

// hostileMarker is in the names and comments of branch B only: no answer
// to "reader" (who may read A) may contain it.
const hostileMarker = "bravo-secret-5f3a"

// maxProblemBytes bounds a ProblemDetails: no input is echoed unbounded.
const maxProblemBytes = 8 << 10

// hostileCase is one request of the catalogue.
type hostileCase struct {
	cat, variant string
	op           declared
	parts        rpcParts
	user, pass   string // "" sends no credentials
	authz        string // a raw Authorization header instead of user/pass
	header       []string
	want         expect
}

func (c hostileCase) name() string { return c.op.op + " " + c.cat + ": " + c.variant }

func (c hostileCase) request(w hostileWorld) (*http.Request, error) {
	// Name the world's type and object where the route takes them, so a
	// parameter is judged, not a missing object.
	parts := c.parts
	vars := map[string]string{}
	for _, m := range pathVar.FindAllStringSubmatch(c.op.path, -1) {
		branch, _ := rpcBranchField(c.op)
		switch {
		case m[1] == "type":
			vars["type"] = "ledger"
		case m[1] == "id" && branch != "id", m[1] == "object":
			vars[m[1]] = strconv.FormatInt(w.doc, 10)
		}
	}
	for k, v := range parts.vars {
		vars[k] = v
	}
	parts.vars = vars
	req, err := rpcRequest(w.base(c.op.path), c.op, parts)
	if err != nil {
		return nil, err
	}
	switch {
	case c.authz != "":
		req.Header.Set("Authorization", c.authz)
	case c.user != "":
		req.SetBasicAuth(c.user, c.pass)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header[c.header[i]] = []string{c.header[i+1]}
	}
	return req, nil
}

// hostileWorld is one running system with the objects the catalogue
// refers to.
type hostileWorld struct {
	base       func(path string) string
	indexer    string // base URL of the process running the indexer
	a, b       int64  // child branches of 4; "reader" may read A only
	victim     int64  // a child branch of 4 that conditional deletes aim at
	typ, attr  int64  // a type and its Integer attribute
	doc, spare int64  // objects of typ on branch 4; spare is for conditional deletes
	// owned holds, by owner kind and branch (A, B), the id of a job and
	// of a comment on that branch, for RPCs addressing them by id.
	owned map[optionsv1.Owner]map[int64]string
}

func newHostileWorld(t *testing.T, start func(t *testing.T) (func(string) string, string)) hostileWorld {
	t.Helper()
	base, indexer := start(t)
	w := hostileWorld{base: base, indexer: indexer}
	admin := httpClient{t, base("/apis/cms/v1"), "admin", "test-password"}
	branch := func(name string) int64 {
		r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
			`{"comment":"branch","values":[`+v(1000, 201, name)+`,`+v(4000, 0, 4)+`]}`)
		var out struct {
			Meta struct {
				ID int64 `json:"id"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil || out.Meta.ID == 0 {
			t.Fatalf("create branch %s: %s", name, r.body)
		}
		return out.Meta.ID
	}
	w.a, w.b, w.victim = branch("Alpha"), branch("Bravo"), branch("Victim")
	model := admin.create(obj(0, "ledger", v(1000, 201, "Ledger")), obj(10, "big", v(1001, 0, "Integer")))
	w.typ, w.attr = model.CreatedObjectIDs[0], model.CreatedObjectIDs[1]
	docs := admin.create(obj(w.typ, "", v(w.attr, 0, 42)), obj(w.typ, "", v(w.attr, 0, 43)))
	w.doc, w.spare = docs.CreatedObjectIDs[0], docs.CreatedObjectIDs[1]
	users := admin.create(obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, w.a)))
	r := admin.must(http.StatusCreated, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/%d/objects", w.b),
		`{"objects":[`+obj(w.typ, "", v(1000, 201, hostileMarker+" object"), v(w.attr, 0, 5))+`]}`)
	secret := decodeWrite(t, r)
	// Webhook definitions live on the default branch only, which the
	// reader may not read: "A's" and "B's" are the same one.
	hook := strconv.FormatInt(newWebhook(admin), 10)
	w.owned = map[optionsv1.Owner]map[int64]string{optionsv1.Owner_OWNER_JOB: {}, optionsv1.Owner_OWNER_COMMENT: {},
		optionsv1.Owner_OWNER_WEBHOOK: {w.a: hook, w.b: hook}}
	for _, br := range []int64{w.a, w.b} {
		body := "<div>comment on " + strconv.FormatInt(br, 10) + "</div>"
		if br == w.b {
			body = "<div>" + hostileMarker + " comment</div>"
		}
		w.owned[optionsv1.Owner_OWNER_COMMENT][br] = createdID(t, admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/comments",
			fmt.Sprintf(`{"branchId":%d,"objectRef":%d,"body":%q}`, br, w.doc, body)))
		w.owned[optionsv1.Owner_OWNER_JOB][br] = createdID(t, admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/jobs",
			fmt.Sprintf(`{"branchId":%d,"jobDefinitionId":1200,"objIds":[%d],"language":0}`, br, w.doc)))
	}
	// Let the index catch up, so the marker is searchable when the
	// catalogue runs.
	tx := strconv.FormatInt(max(secret.Transaction.ID, users.Transaction.ID), 10)
	httpClient{t, base("/delivery/api"), "admin", "test-password"}.must(http.StatusOK, http.MethodGet,
		fmt.Sprintf("/delivery/api/branches/%d/objects?filter=", w.b), "", "X-Cms-Min-Version", tx, "X-Cms-Max-Wait", "30s")
	return w
}

// createdID is the "id" of a created comment or job answer.
func createdID(t *testing.T, r httpResult) string {
	t.Helper()
	var out struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.ID == 0 {
		t.Fatalf("no id in %s", r.body)
	}
	return strconv.FormatInt(out.ID, 10)
}

// hostileResult is the outcome of one case.
type hostileResult struct {
	c       hostileCase
	code    int
	elapsed time.Duration
	fault   string // why the case failed, "" if it held
}

// runHostile sends the catalogue with hostileConcurrency workers, checks
// every answer, and bounds the heap growth over the whole run (the servers
// run in the test process, so its heap is theirs).
func runHostile(t *testing.T, w hostileWorld, cases []hostileCase) {
	client := &http.Client{Timeout: hostileTimeout}
	notImpl := baseline501(t, w, client)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // sample the heap while the catalogue runs
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	results := make([]hostileResult, len(cases))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range hostileConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(cases) {
					return
				}
				results[i] = sendHostile(client, w, cases[i], notImpl[cases[i].op.op])
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	reportHostile(t, results, elapsed)
	checkIndexed(t, w)
	growth := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use: %d MiB before, %d MiB after (growth %d MiB), peak %d MiB; %d MiB allocated in total",
		before.HeapInuse>>20, after.HeapInuse>>20, growth>>20, peak.Load()>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
	if growth > hostileHeapGrowth {
		t.Errorf("the heap grew by %d MiB over the catalogue, bound %d MiB", growth>>20, hostileHeapGrowth>>20)
	}
}

// baseline501 sends every operation's valid-shaped request as the
// administrator: none may be a 5xx, not even 501 (every operation is
// built); should one answer 501, its hostile variants may too, so the
// catalogue still reports everything else.
func baseline501(t *testing.T, w hostileWorld, client *http.Client) map[string]bool {
	t.Helper()
	notImpl := map[string]bool{}
	var names []string
	for _, d := range declaredRPCs() {
		r := sendHostile(client, w, hostileCase{cat: "valid", variant: "as administrator", op: d,
			user: "admin", pass: "test-password", want: acceptable()}, true)
		if r.fault != "" {
			t.Errorf("%s: %s", r.c.name(), r.fault)
		}
		if r.code == http.StatusNotImplemented {
			notImpl[d.op] = true
			names = append(names, d.op)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		// Every operation is built and the test servers configure every
		// component: a 501 is a regression.
		t.Errorf("%d operations answer a valid request with 501 (not implemented): %s", len(names), strings.Join(names, ", "))
	}
	return notImpl
}

// sendHostile sends one case and checks the answer; notImpl allows 501
// for a case not decided before the handler.
func sendHostile(client *http.Client, w hostileWorld, c hostileCase, notImpl bool) hostileResult {
	res := hostileResult{c: c}
	req, err := c.request(w)
	if err != nil {
		res.fault = fmt.Sprintf("building the request: %v", err)
		return res
	}
	start := time.Now()
	resp, err := client.Do(req)
	res.elapsed = time.Since(start)
	if err != nil {
		res.fault = fmt.Sprintf("no answer within %s: %v", hostileTimeout, err)
		return res
	}
	body, rerr := readAnswer(&http.Response{StatusCode: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(io.LimitReader(resp.Body, 8<<20))})
	resp.Body.Close()
	res.code = resp.StatusCode
	if rerr != nil {
		res.fault = fmt.Sprintf("%d, reading the answer: %v", res.code, rerr)
		return res
	}
	res.fault = judge(c, resp, body, notImpl)
	return res
}

// judge returns why the answer breaks the rules, "" if it keeps them.
func judge(c hostileCase, resp *http.Response, body []byte, notImpl bool) string {
	code := resp.StatusCode
	show := func() string { return fmt.Sprintf("%d %.300s", code, body) }
	switch {
	case c.user == "reader" && bytes.Contains(body, []byte(hostileMarker)):
		return "the answer holds data of branch B: " + show()
	case code == http.StatusNotImplemented && notImpl && !c.want.before:
		// The operation is not built yet; its 501 is checked below.
	case code == http.StatusServiceUnavailable && c.want.retryLater && resp.Header.Get("Retry-After") != "":
	case code >= 500:
		return "server error " + show()
	case !c.want.ok(code):
		return fmt.Sprintf("want %s, got %s", c.want.desc, show())
	}
	if c.want.challenge && code == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		return "401 without a Basic challenge: " + show()
	}
	if code < 400 {
		return ""
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		return fmt.Sprintf("Content-Type %q, want application/problem+json: %s", resp.Header.Get("Content-Type"), show())
	}
	if len(body) > maxProblemBytes {
		return fmt.Sprintf("a ProblemDetails of %d bytes (at most %d): %.300s", len(body), maxProblemBytes, body)
	}
	var p gateway.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Sprintf("ProblemDetails do not decode (%v): %s", err, show())
	}
	if p.Status != code || p.Title == "" {
		return "ProblemDetails without the status or a title: " + show()
	}
	if errkind.HasLabel(p.Detail) {
		return "a detail that starts with a kind label, not the domain's message: " + show()
	}
	return ""
}

// reportHostile logs the catalogue's size and outcome per category and
// fails the test for every broken case.
func reportHostile(t *testing.T, results []hostileResult, elapsed time.Duration) {
	t.Helper()
	type tally struct {
		cases, failed int
		codes         map[int]int
	}
	cats := map[string]*tally{}
	var slowest hostileResult
	ops := map[string]bool{}
	failures := 0
	for _, r := range results {
		tl := cats[r.c.cat]
		if tl == nil {
			tl = &tally{codes: map[int]int{}}
			cats[r.c.cat] = tl
		}
		tl.cases++
		tl.codes[r.code]++
		ops[r.c.op.op] = true
		if r.elapsed > slowest.elapsed {
			slowest = r
		}
		if r.fault != "" {
			tl.failed++
			failures++
			if failures <= 150 {
				t.Errorf("%s: %s", r.c.name(), r.fault)
			}
		}
	}
	if failures > 150 {
		t.Errorf("… %d failures in all (first 150 shown)", failures)
	}
	t.Logf("hostile catalogue: %d requests on %d operations in %s (slowest %s: %s)",
		len(results), len(ops), elapsed.Round(time.Millisecond), slowest.elapsed.Round(time.Millisecond), slowest.c.name())
	names := make([]string, 0, len(cats))
	for n := range cats {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tl := cats[n]
		codes := make([]int, 0, len(tl.codes))
		for c := range tl.codes {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		var s []string
		for _, c := range codes {
			s = append(s, fmt.Sprintf("%d×%d", c, tl.codes[c]))
		}
		t.Logf("  %-8s %5d requests, %4d failed; answers %s", n, tl.cases, tl.failed, strings.Join(s, " "))
	}
}

// retryLater accepts what acceptable does and a 503 with Retry-After.
func retryLater() expect {
	e := acceptable()
	e.desc, e.retryLater = "2xx/304/4xx or 503 with Retry-After", true
	return e
}

// checkIndexed: every write the catalogue got acknowledged reached the
// index. A write after the catalogue becomes visible in Delivery (events
// are applied in order, so none before it is stuck retrying) and the
// indexer parked no event.
func checkIndexed(t *testing.T, w hostileWorld) {
	t.Helper()
	admin := httpClient{t, w.base("/apis/cms/v1"), "admin", "test-password"}
	last := admin.create(obj(w.typ, "", v(w.attr, 0, 1)))
	// Each branch the catalogue created costs a copy of branch 4's
	// documents: on a loaded machine the indexer may need a while.
	start := time.Now()
	var r httpResult
	for range 3 {
		r = httpClient{t, w.base("/delivery/api"), "admin", "test-password"}.do(http.MethodGet,
			fmt.Sprintf("/delivery/api/branches/4/objects/%d", last.CreatedObjectIDs[0]), "",
			"X-Cms-Min-Version", strconv.FormatInt(last.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
		if r.code != http.StatusServiceUnavailable {
			break
		}
	}
	if r.code != http.StatusOK {
		t.Errorf("a write after the catalogue did not reach Delivery within %s: %d %.300s", time.Since(start).Round(time.Second), r.code, r.body)
	}
	t.Logf("the index caught up with the catalogue's writes %s after it ended", time.Since(start).Round(time.Millisecond))
	if parked := scrape(t, w.indexer)[`cms_indexer_events_total{result="parked"}`]; parked != 0 {
		t.Errorf("the indexer parked %v change events of acknowledged writes", parked)
	}
}
