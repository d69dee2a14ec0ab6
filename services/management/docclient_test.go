package management_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
)

// docClient calls the whole system (`cms run`) over HTTP as the
// administrator and validates every exchange against NovaDB's document
// (cms-6.0.json), like the contract tests; the comment and job tests use
// it.
type docClient struct {
	base string
	doc  *openapitest.Document
	// seen counts the validated exchanges per operation of the document
	// (nil: not counted).
	seen map[string]int
}

// docReply is one answer.
type docReply struct {
	status int
	header http.Header
	body   []byte
}

func (r docReply) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

func (r docReply) detail(t *testing.T) string {
	t.Helper()
	d, _ := r.object(t)["detail"].(string)
	return d
}

// send sends req as the administrator and fails the test unless the
// answer has status want; a 304 must be empty with an ETag, an error a
// ProblemDetails.
func (c docClient) send(t *testing.T, req *http.Request, want int) (docReply, *http.Response) {
	t.Helper()
	req.SetBasicAuth("admin", adminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := docReply{status: resp.StatusCode, header: resp.Header, body: b}
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", req.Method, req.URL.Path, r.status, want, b)
	}
	switch ct := r.header.Get("Content-Type"); {
	case want == http.StatusNotModified:
		if len(b) != 0 || r.header.Get("ETag") == "" {
			t.Errorf("%s %s: 304 with body %q, ETag %q", req.Method, req.URL.Path, b, r.header.Get("ETag"))
		}
	case want >= 400:
		if !strings.HasPrefix(ct, "application/problem+json") {
			t.Errorf("%s %s: %d is not ProblemDetails: %s %s", req.Method, req.URL.Path, want, ct, b)
		}
	}
	return r, resp
}

// validate checks the answer against the document.
func (c docClient) validate(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, r docReply) {
	t.Helper()
	if err := c.doc.ValidateResponse(req, reqBody, resp, r.body); err != nil {
		t.Errorf("%s %s: contract violation: %v\nbody: %.600s", req.Method, req.URL.Path, err, r.body)
		return
	}
	c.count(req)
}

// count adds a validated exchange to the operation of c.seen whose method
// and path template (relative to base) the request matches.
func (c docClient) count(req *http.Request) {
	if c.seen == nil {
		return
	}
	base, _ := url.Parse(c.base)
	rel := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), base.Path), "/")
	for op := range c.seen {
		method, tmpl, ok := c.doc.Operation(op)
		segs := strings.Split(tmpl, "/")
		if !ok || !strings.EqualFold(method, req.Method) || len(segs) != len(rel) {
			continue
		}
		match := true
		for i, s := range segs {
			match = match && (s == rel[i] || strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && rel[i] != "")
		}
		if match {
			c.seen[op]++
		}
	}
}

// lenient is do for a request the document does not allow but the server
// accepts on purpose (the read-side JobStatus codes 4 and 5 in a PATCH):
// the answer is validated, the request is not.
func (c docClient) lenient(t *testing.T, want int, method, path, body string) docReply {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	r, resp := c.send(t, req, want)
	c.validate(t, req, []byte(body), resp, r)
	return r
}

// do sends one JSON request, checks the status, and validates request and
// response against the document (an invalid request on purpose, 400,
// skips the request check).
func (c docClient) do(t *testing.T, want int, method, path, body string, hdr ...string) docReply {
	t.Helper()
	return c.exchange(t, true, want, method, path, body, hdr...)
}

// undeclared is do for a status the document does not declare for the
// operation: 304 on the comment reads (ETag/If-None-Match as on every other
// CMS read, docs/api-reference.md §3) and 400 for a non-numeric comment id. The
// response is then checked for shape (empty 304, ProblemDetails) only.
func (c docClient) undeclared(t *testing.T, want int, method, path, body string, hdr ...string) docReply {
	t.Helper()
	return c.exchange(t, false, want, method, path, body, hdr...)
}

func (c docClient) exchange(t *testing.T, declared bool, want int, method, path, body string, hdr ...string) docReply {
	t.Helper()
	var reqBody []byte
	if body != "" {
		reqBody = []byte(body)
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	r, resp := c.send(t, req, want)
	if ct := r.header.Get("Content-Type"); want < 300 && len(r.body) > 0 && !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if want != http.StatusBadRequest {
		if err := c.doc.ValidateRequest(req, reqBody); err != nil {
			t.Errorf("test sends a request the document rejects: %v", err)
		}
	}
	if declared {
		c.validate(t, req, reqBody, resp, r)
	}
	return r
}

// upload sends a multipart job input chunk (field "file") and returns the
// reply; path is /jobInput or /jobInput/{token}.
func (c docClient) upload(t *testing.T, want int, path string, data []byte) docReply {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "input.json")
	_, _ = fw.Write(data)
	_ = mw.Close()
	body := buf.Bytes()
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r, resp := c.send(t, req, want)
	c.validate(t, req, body, resp, r)
	return r
}

// bin GETs a byte stream (logs, artifacts, the ZIP): application/octet-
// stream as the document declares; a 200 is validated against it.
func (c docClient) bin(t *testing.T, want int, path string, hdr ...string) docReply {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	r, resp := c.send(t, req, want)
	if ct := r.header.Get("Content-Type"); want < 300 && ct != "application/octet-stream" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	if want == http.StatusOK {
		c.validate(t, req, nil, resp, r)
	}
	return r
}
