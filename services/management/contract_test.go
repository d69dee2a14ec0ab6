package management_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/openapitest"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/cmsplatform/cms/services/management"
)

// The contract tests run the whole system (`cms run`) in-process and check
// every exchange of the Management operations against NovaDB's published
// document (testdata/cms-6.0.json, a verbatim copy), plus the two operations
// the spec lists but that document lacks (testdata/interfaces-extra-paths.json).

const adminPassword = "test-password"

var (
	docOnce sync.Once
	doc     *openapitest.Document
	docErr  error
)

// contractDoc loads cms-6.0.json merged with the extra paths. Error bodies
// are application/problem+json, which docs/api-reference.md §4 says to accept
// where the document says application/json.
func contractDoc(t *testing.T) *openapitest.Document {
	t.Helper()
	docOnce.Do(func() {
		var base map[string]any
		var extra map[string]any
		if docErr = readJSON("testdata/cms-6.0.json", &base); docErr != nil {
			return
		}
		if docErr = readJSON("testdata/interfaces-extra-paths.json", &extra); docErr != nil {
			return
		}
		paths := base["paths"].(map[string]any)
		for p, item := range extra {
			if strings.HasPrefix(p, "_") {
				continue
			}
			cur, _ := paths[p].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
				paths[p] = cur
			}
			for method, op := range item.(map[string]any) {
				cur[method] = op
			}
		}
		var b []byte
		if b, docErr = json.Marshal(base); docErr != nil {
			return
		}
		doc, docErr = openapitest.Load(b, openapitest.WithContentTypeAlias("application/problem+json", "application/json"))
	})
	if docErr != nil {
		t.Fatal(docErr)
	}
	return doc
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// startSystem runs the system on random ports with the given store (zero:
// the embedded SQLite) and returns the Management base URL and the gRPC
// address; more changes the rest of the configuration.
func startSystem(t testing.TB, store app.Component, more ...func(*app.Config)) (string, string) {
	t.Helper()
	cfg := app.DefaultConfig()
	if store.Engine != "" {
		cfg.Store = store
	}
	for _, f := range more {
		f(&cfg)
	}
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = adminPassword
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("server did not shut down within 20s")
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	}
	return "http://" + srv.HTTPAddr() + management.BasePath, srv.GRPCAddr()
}

// freshPostgres creates an empty database on the CMS_POSTGRES_URL server,
// dropped at cleanup, and returns its URL (skips locally without the URL).
func freshPostgres(t testing.TB) string {
	t.Helper()
	return testenv.PostgresDatabase(t)
}

// client sends requests and checks each exchange against the document.
type client struct {
	base string
	grpc *grpcBridge
	doc  *openapitest.Document
	seen map[string]int // operationId → validated exchanges
}

// call is one request. op names the operation the request must route to in
// the document; invalid marks a request that breaks the document on purpose
// (so only the response is validated).
type call struct {
	op, method, path, body string
	header                 map[string]string
	noAuth, invalid        bool
	// undeclared: a status the document does not declare for the
	// operation (404 and 422 of the code generator, which the document
	// lists with 400 only); the response is checked for shape only
	// (checkEnvelope), as for 401.
	undeclared bool
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

var templateVar = regexp.MustCompile(`\{[^}]+\}`)

// do sends c and validates request, status, headers and body.
func (cl *client) do(t *testing.T, want int, c call) reply {
	t.Helper()
	var reqBody []byte
	if c.body != "" {
		reqBody = []byte(c.body)
	}
	req, err := http.NewRequest(c.method, cl.base+c.path, bytes.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if !c.noAuth {
		req.SetBasicAuth("admin", adminPassword)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	// The request must be the operation it claims to be.
	method, tmpl, ok := cl.doc.Operation(c.op)
	route := regexp.MustCompile("^" + templateVar.ReplaceAllString(strings.ReplaceAll(tmpl, ".", `\.`), `[^/]+`) + "$")
	if !ok || method != c.method || !route.MatchString(req.URL.Path[len(management.BasePath):]) {
		t.Fatalf("%s %s is not %s (%s %s in the document)", c.method, c.path, c.op, method, tmpl)
	}
	if !c.invalid {
		if err := cl.doc.ValidateRequest(req, reqBody); err != nil {
			t.Errorf("test sends a request the document rejects: %v", err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, body: body}
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", c.method, c.path, r.status, want, body)
	}
	cl.checkEnvelope(t, c, r)
	if r.status == http.StatusUnauthorized || c.undeclared {
		return r // not declared by the document (docs/api-reference.md §1); checked in checkEnvelope
	}
	if err := cl.doc.ValidateResponse(req, reqBody, resp, body); err != nil {
		t.Errorf("contract violation (%s): %v\nbody: %.600s", c.op, err, body)
	}
	cl.seen[c.op]++
	return r
}

// conditionalOps answer with an ETag and honour If-None-Match (304).
var conditionalOps = map[string]bool{
	"Cms_GetBranches": true, "Cms_GetBranch": true, "Cms_GetObject": true, "Cms_GetObjects": true,
	"Cms_GetTypedObjects": true, "Identity_GetUserDisplayName": true,
	"CodeGenerator_GetCSharpClasses": true, "CodeGenerator_GetCSharpClass": true,
}

// checkEnvelope checks what the document cannot express: media types, ETag
// on 200/304 of conditional reads, empty 304 bodies, ProblemDetails on
// errors, WWW-Authenticate on 401.
func (cl *client) checkEnvelope(t *testing.T, c call, r reply) {
	t.Helper()
	ct := r.header.Get("Content-Type")
	switch {
	case r.status == http.StatusNotModified:
		if len(r.body) != 0 || r.header.Get("ETag") == "" {
			t.Errorf("%s: 304 with body %q, ETag %q", c.op, r.body, r.header.Get("ETag"))
		}
	case r.status >= 400:
		var p map[string]any
		if !strings.HasPrefix(ct, "application/problem+json") || json.Unmarshal(r.body, &p) != nil {
			t.Errorf("%s: %d is not ProblemDetails: %s %s", c.op, r.status, ct, r.body)
		} else if st, _ := p["status"].(float64); int(st) != r.status {
			t.Errorf("%s: ProblemDetails status %v on a %d", c.op, p["status"], r.status)
		}
		if r.status == http.StatusUnauthorized && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s: 401 without WWW-Authenticate: Basic: %v", c.op, r.header)
		}
	case c.header["Accept"] == "text/plain":
		// A string answer asked for as plain text (docs/codegen.md).
		if !strings.HasPrefix(ct, "text/plain") || r.header.Get("ETag") == "" {
			t.Errorf("%s: plain text answer with Content-Type %q, ETag %q", c.op, ct, r.header.Get("ETag"))
		}
	default:
		if !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: %d with Content-Type %q", c.op, r.status, ct)
		}
		if conditionalOps[c.op] && r.header.Get("ETag") == "" {
			t.Errorf("%s: 200 without ETag", c.op)
		}
		var body any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Errorf("%s: body is not JSON: %v", c.op, err)
		}
		checkBody(t, c.op, body)
	}
}

// utcTime is docs/api-reference.md §3: UTC ISO-8601, at most 7 fractional
// digits, trailing zeros dropped.
var utcTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{0,6}[1-9])?Z$`)

// checkBody checks rules of the document's descriptions that its schemas
// cannot state: values "sorted by attribute, variant, language and sort
// key", CmsObjectList.count = number of objects, transaction timestamps.
func checkBody(t *testing.T, op string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if objs, ok := m["objects"].([]any); ok && m["count"] != nil && int(m["count"].(float64)) != len(objs) {
		t.Errorf("%s: count %v with %d objects", op, m["count"], len(objs))
	}
	if tr, ok := m["transaction"].(map[string]any); ok {
		if ts, _ := tr["timestamp"].(string); !utcTime.MatchString(ts) {
			t.Errorf("%s: transaction timestamp %q", op, ts)
		}
	}
	if vals, ok := m["values"].([]any); ok {
		key := func(x any) [4]float64 {
			v := x.(map[string]any)
			sr, _ := v["sortReverse"].(float64)
			return [4]float64{v["attribute"].(float64), v["variant"].(float64), v["language"].(float64), sr}
		}
		for i := 1; i < len(vals); i++ {
			a, b := key(vals[i-1]), key(vals[i])
			if slices.Compare(a[:], b[:]) > 0 {
				t.Errorf("%s: values not sorted by attribute, variant, language, sort key: %v before %v", op, vals[i-1], vals[i])
			}
		}
	}
	for _, x := range m {
		switch x := x.(type) {
		case map[string]any:
			checkBody(t, op, x)
		case []any:
			for _, e := range x {
				checkBody(t, op, e)
			}
		}
	}
}
