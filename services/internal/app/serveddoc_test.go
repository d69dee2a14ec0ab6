package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/openapitest"
	"github.com/cmsplatform/cms/proto/gen/openapi"
)

// servedDoc validates exchanges against a document the server serves at
// <base>/openapi.json: the Rendering one (NovaDB has none, so ours is the
// contract), the operations of this platform that NovaDB's documents lack,
// and what every served document says of the wire (numbers, nulls,
// ProblemDetails). The served documents are Swagger 2.0, which openapitest
// converts to OpenAPI 3. A request is checked for its path, query and JSON
// body, an answer for its status, media type and JSON body.
type servedDoc struct {
	name string
	doc  *openapitest.Document
}

// servedDocs are loaded once per test binary: converting the Management
// document takes a moment.
var servedDocs = sync.OnceValues(func() (map[string]*openapitest.Document, error) {
	out := map[string]*openapitest.Document{}
	for name, spec := range map[string][]byte{
		"Rendering": openapi.Rendering, "Management": openapi.Management,
		"Delivery": openapi.Delivery, "Index": openapi.Index,
	} {
		// Every operation declares its 429 (login throttling, per-user
		// caps) with Retry-After, not only through "default".
		d, err := openapitest.LoadSwagger2(spec, openapitest.WithDeclaredStatuses(http.StatusTooManyRequests))
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
})

func loadServedDoc(t *testing.T, name string) servedDoc {
	t.Helper()
	docs, err := servedDocs()
	if err != nil {
		t.Fatal(err)
	}
	return servedDoc{name, docs[name]}
}

func loadRenderingDoc(t *testing.T) servedDoc { return loadServedDoc(t, "Rendering") }

// check validates the request method target (path and query) with body
// ("" for none, sent as application/json like httpClient.do) and its
// answer r. Every error answer must be ProblemDetails.
func (d servedDoc) check(t *testing.T, method, target, body string, r httpResult) {
	t.Helper()
	req, reqBody := d.request(t, method, target, body)
	d.validate(t, req, reqBody, &http.Response{StatusCode: r.code, Header: r.header}, r.body)
}

// checkAnswer validates only the answer r, for requests the document
// rejects on purpose (a bad parameter answered 400).
func (d servedDoc) checkAnswer(t *testing.T, method, target, body string, r httpResult) {
	t.Helper()
	req, reqBody := d.request(t, method, target, body)
	d.validateAnswer(t, req, reqBody, &http.Response{StatusCode: r.code, Header: r.header}, r.body)
}

func (d servedDoc) request(t *testing.T, method, target, body string) (*http.Request, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://cms.test"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		return req, nil
	}
	req.Header.Set("Content-Type", "application/json")
	return req, []byte(body)
}

// validate checks one exchange whose bodies are given apart.
func (d servedDoc) validate(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if err := d.doc.ValidateRequest(req, reqBody); err != nil {
		t.Errorf("%s %s: the test sends a request the %s document rejects: %v", req.Method, req.URL.RequestURI(), d.name, err)
	}
	d.validateAnswer(t, req, reqBody, resp, respBody)
}

func (d servedDoc) validateAnswer(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s %s: error %d is not ProblemDetails: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := d.doc.ValidateResponse(req, reqBody, resp, respBody); err != nil {
		t.Errorf("%s %s: the answer breaks the %s document: %v", req.Method, req.URL.RequestURI(), d.name, err)
	}
}

// TestServedDocumentsDescribeTheWire sends a representative set of
// Management, Delivery and Index requests to `cms run` and validates each
// exchange against the document its group serves: int64 fields are JSON
// numbers, emit_null fields may be null, and errors are ProblemDetails, as
// the gateway writes them (NovaDB's own documents are checked elsewhere).
func TestServedDocumentsDescribeTheWire(t *testing.T) {
	base := "http://" + startServer(t).HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	mgmt, deliv, index := loadServedDoc(t, "Management"), loadServedDoc(t, "Delivery"), loadServedDoc(t, "Index")

	created := `{"objects":[` + obj(0, "sdoc", v(1000, 201, "Served doc")) + `]}`
	w := admin.must(http.StatusCreated, http.MethodPost, "/apis/cms/v1/branches/4/objects", created)
	mgmt.check(t, http.MethodPost, "/apis/cms/v1/branches/4/objects", created, w)
	var made write
	if err := json.Unmarshal(w.body, &made); err != nil || len(made.CreatedObjectIDs) != 1 {
		t.Fatalf("create answer %s: %v", w.body, err)
	}
	item := admin.create(obj(made.CreatedObjectIDs[0], "sdocitem", v(1000, 201, "Second")))
	id := item.CreatedObjectIDs[0]
	// Delivery reads the index: wait for the item's transaction.
	indexed := []string{"X-Cms-Min-Version", fmt.Sprint(item.Transaction.ID), "X-Cms-Max-Wait", "20s"}
	comment := newComment(t, admin)
	job := newJob(t, admin)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339) // a release time

	for _, ex := range []struct {
		want                 int
		method, target, body string
	}{
		{http.StatusOK, http.MethodGet, "/apis/cms/v1/branches", ""},
		{http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/4", ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d", id), ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects?ids=%d,40", id), ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/comments/%d", comment), ""},
		{http.StatusOK, http.MethodGet, "/apis/cms/v1/comments?branchRef=4&take=5", ""},
		{http.StatusOK, http.MethodGet, "/apis/cms/v1/jobs?take=5", ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d", job), ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d/progress", job), ""},
		{http.StatusNotFound, http.MethodGet, "/apis/cms/v1/branches/987654", ""},
		{http.StatusNotFound, http.MethodGet, "/apis/cms/v1/comments/987654321", ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/history?take=5", id), ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d?asOf=%d", id, item.Transaction.ID), ""},
		{http.StatusBadRequest, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d?asOf=0", id), ""},
		{http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/types/sdoc/objects?asOf=%d&take=5", item.Transaction.ID), ""},
		{http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/revert", id),
			fmt.Sprintf(`{"transaction":%d,"comment":"served doc"}`, item.Transaction.ID)},
		{http.StatusOK, http.MethodPost, "/apis/cms/v1/branches/4/objects/revert",
			fmt.Sprintf(`{"objectIds":["%d"],"transaction":%d}`, id, item.Transaction.ID)},
		{http.StatusNotFound, http.MethodPost, "/apis/cms/v1/branches/4/objects/987654/revert", `{"transaction":1}`},
		{http.StatusBadRequest, http.MethodGet, "/apis/cms/v1/branches/4/diff", ""},
		{http.StatusNotFound, http.MethodPost, "/apis/cms/v1/branches/987654/promote", `{"dryRun":true}`},
		{http.StatusNotFound, http.MethodPost, "/apis/cms/v1/branches/987654/schedule", `{"at":"` + soon + `"}`},
		{http.StatusBadRequest, http.MethodPost, "/apis/cms/v1/branches/4/schedule", `{"at":"` + soon + `","comment":"spring"}`},
		{http.StatusBadRequest, http.MethodPost, "/apis/cms/v1/branches/4/transactions/0/revert", `{}`},
	} {
		mgmt.check(t, ex.method, ex.target, ex.body, admin.must(ex.want, ex.method, ex.target, ex.body))
	}

	for _, ex := range []struct {
		want   int
		target string
	}{
		{http.StatusOK, fmt.Sprintf("/delivery/api/branches/4/objects/%d", id)},
		{http.StatusOK, "/delivery/api/branches/4/updateInfo"},
		{http.StatusNotFound, "/delivery/api/branches/4/objects/987654"},
	} {
		deliv.check(t, http.MethodGet, ex.target, "", admin.must(ex.want, http.MethodGet, ex.target, "", indexed...))
	}

	for _, ex := range []struct {
		want         int
		target, body string
	}{
		{http.StatusOK, "/apis/index/v1/branches/4/objects", `{"page":{"take":5},"minChangeTrackingVersion":1,"maxWaitTime":"00:00:05"}`},
		{http.StatusOK, "/apis/index/v1/branches/4/objectCount", `{}`},
		{http.StatusOK, "/apis/index/v1/branches/4/comments", `{"page":{"take":5}}`},
		{http.StatusOK, "/apis/index/v1/branches/4/commentCount", `{}`},
	} {
		index.check(t, http.MethodPost, ex.target, ex.body, admin.must(ex.want, http.MethodPost, ex.target, ex.body))
	}
	// A body the server refuses: the answer is still the document's.
	bad := `{"page":{"take":"many"}}`
	index.checkAnswer(t, http.MethodPost, "/apis/index/v1/branches/4/objects", bad,
		admin.must(http.StatusBadRequest, http.MethodPost, "/apis/index/v1/branches/4/objects", bad))
}
