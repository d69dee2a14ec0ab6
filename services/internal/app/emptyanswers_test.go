package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/proto/gen/openapi"
)

// openAPIOperation is one operation of a Swagger 2.0 or OpenAPI 3 document:
// its responses by status code.
type openAPIOperation struct {
	Responses map[string]struct {
		Schema  json.RawMessage            `json:"schema"`  // Swagger 2.0
		Content map[string]json.RawMessage `json:"content"` // OpenAPI 3
	} `json:"responses"`
}

type openAPIDocument struct {
	Paths map[string]map[string]openAPIOperation `json:"paths"`
}

// emptyOperation is an operation whose success answer has no body.
type emptyOperation struct {
	method, path string // path as served, e.g. /apis/cms/v1/comments/{commentId}
	status       int
}

func (o emptyOperation) String() string { return o.method + " " + o.path }

// emptyOperations returns the operations of doc (paths under prefix) whose
// success answer has no body: no schema or content at all, or the empty
// object protoc-gen-openapiv2 writes for google.protobuf.Empty.
func emptyOperations(t *testing.T, doc []byte, prefix string) []emptyOperation {
	t.Helper()
	var d openAPIDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var out []emptyOperation
	for path, ops := range d.Paths {
		for method, op := range ops {
			for code, r := range op.Responses {
				status, err := strconv.Atoi(code)
				if err != nil || status < 200 || status > 299 {
					continue
				}
				if len(r.Content) == 0 && (len(r.Schema) == 0 || isEmptyObjectSchema(r.Schema)) {
					out = append(out, emptyOperation{strings.ToUpper(method), prefix + path, status})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func isEmptyObjectSchema(raw json.RawMessage) bool {
	var s map[string]json.RawMessage
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	for k, v := range s {
		switch {
		case k == "type" && string(v) == `"object"`:
		case k == "properties" && string(v) == `{}`:
		default:
			return false
		}
	}
	return true
}

// emptyAnswerRequests builds, for each operation with an empty success
// answer, a request that succeeds against a fresh system. A new operation
// with an empty answer fails TestEmptyAnswersHaveNoContentType until it
// gets an entry here.
var emptyAnswerRequests = map[string]func(t *testing.T, c httpClient) (method, path, body string){
	"PATCH /apis/cms/v1/comments/{commentId}": func(t *testing.T, c httpClient) (string, string, string) {
		return http.MethodPatch, fmt.Sprintf("/apis/cms/v1/comments/%d", newComment(t, c)), `{"body":"<div>edited</div>"}`
	},
	"DELETE /apis/cms/v1/comments/{commentId}": func(t *testing.T, c httpClient) (string, string, string) {
		return http.MethodDelete, fmt.Sprintf("/apis/cms/v1/comments/%d", newComment(t, c)), ""
	},
	"PATCH /apis/cms/v1/jobs/{jobId}": func(t *testing.T, c httpClient) (string, string, string) {
		return http.MethodPatch, fmt.Sprintf("/apis/cms/v1/jobs/%d", newJob(t, c)), `{"retainUntil":"2030-01-01T00:00:00Z"}`
	},
	"DELETE /apis/cms/v1/jobs/{jobId}": func(t *testing.T, c httpClient) (string, string, string) {
		return http.MethodDelete, fmt.Sprintf("/apis/cms/v1/jobs/%d", newJob(t, c)), ""
	},
	// Cancelling a job input is idempotent: a well-formed token answers
	// 200 whether or not an upload holds it.
	"DELETE /apis/cms/v1/jobInput/{token}": func(*testing.T, httpClient) (string, string, string) {
		return http.MethodDelete, "/apis/cms/v1/jobInput/" + strings.Repeat("ab", 16), ""
	},
	"DELETE /apis/cms/v1/fileUpload/{token}": func(t *testing.T, c httpClient) (string, string, string) {
		return http.MethodDelete, "/apis/cms/v1/fileUpload/" + newUpload(t, c), ""
	},
}

// newUpload starts an upload and returns its token.
func newUpload(t *testing.T, c httpClient) string {
	t.Helper()
	body, ct := multipartBody(t, "File", []byte("chunk"), "Extension", "txt")
	req, err := http.NewRequest(http.MethodPost, c.base+"/apis/cms/v1/fileUpload", body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(c.user, c.pass)
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("start upload: %d %v", resp.StatusCode, err)
	}
	return out.Token
}

// newJob creates an export job (definition 1200 = jobExportJson).
func newJob(t *testing.T, c httpClient) int64 {
	t.Helper()
	r := c.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/jobs", `{"branchId":4,"jobDefinitionId":1200,"objIds":[201],"language":0}`)
	var out struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.ID == 0 {
		t.Fatalf("create job: %s", r.body)
	}
	return out.ID
}

func newComment(t *testing.T, c httpClient) int64 {
	t.Helper()
	r := c.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/comments", `{"branchId":4,"objectRef":40,"body":"<div>note</div>"}`)
	var out struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.ID == 0 {
		t.Fatalf("create comment: %s", r.body)
	}
	return out.ID
}

// TestEmptyAnswersHaveNoContentType walks every operation of the four
// served OpenAPI documents whose success answer has no body and calls it:
// the declared status, Content-Length 0 and no Content-Type (clients that
// parse every JSON-labelled answer would fail on an empty one). NovaDB's
// own Management and Index documents must declare no other empty answers.
func TestEmptyAnswersHaveNoContentType(t *testing.T) {
	var ops []emptyOperation
	for _, doc := range [][]byte{openapi.Management, openapi.Delivery, openapi.Rendering, openapi.Index} {
		ops = append(ops, emptyOperations(t, doc, "")...)
	}
	if len(ops) == 0 {
		t.Fatal("no operation with an empty answer in the served documents")
	}
	served := map[string]emptyOperation{}
	for _, op := range ops {
		served[op.String()] = op
	}
	for file, prefix := range map[string]string{
		"../../management/testdata/cms-6.0.json": "/apis/cms/v1",
		"../../index/testdata/index-6.0.json":    "/apis/index/v1",
	} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range emptyOperations(t, doc, prefix) {
			if s, ok := served[op.String()]; !ok || s.status != op.status {
				t.Errorf("NovaDB declares %s as %d without content; the served document does not (%+v)", op, op.status, s)
			}
		}
	}

	c := httpClient{t, "http://" + startServer(t).HTTPAddr(), "admin", "test-password"}
	for _, op := range ops {
		t.Run(op.String(), func(t *testing.T) {
			build, ok := emptyAnswerRequests[op.String()]
			if !ok {
				t.Fatalf("no request for %s in emptyAnswerRequests: add one that succeeds", op)
			}
			method, path, body := build(t, c)
			if method != op.method {
				t.Fatalf("emptyAnswerRequests[%s] sends %s", op, method)
			}
			resp := rawCall(t, c, method, path, body)
			if resp.StatusCode == http.StatusNotImplemented {
				t.Skipf("%s answers 501 until it is implemented", op)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != op.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, op.status, b)
			}
			if len(b) != 0 || resp.ContentLength != 0 || resp.Header.Get("Content-Length") != "0" {
				t.Errorf("body %q, Content-Length %q; want none and 0", b, resp.Header.Get("Content-Length"))
			}
			if v, ok := resp.Header["Content-Type"]; ok {
				t.Errorf("Content-Type %q on an answer without a body", v)
			}
			if slices.Contains(resp.TransferEncoding, "chunked") {
				t.Errorf("chunked transfer encoding on an empty answer")
			}
		})
	}
}

// rawCall sends one request as c's user and returns the response, whose
// body the caller reads (headers as sent, nothing decoded).
func rawCall(t *testing.T, c httpClient, method, path, body string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(c.user, c.pass)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
