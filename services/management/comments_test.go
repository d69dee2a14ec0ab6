package management_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
	"github.com/cmsplatform/cms/services/internal/app"
)

// The comment operations run against the whole system (`cms run`) over
// HTTP; every request and response is validated against NovaDB's document
// (cms-6.0.json) like the contract tests. Who may change a comment (403)
// is tested in pkg/content: the system's only user is the administrator.

func TestCommentsSQLite(t *testing.T) { runComments(t, app.Component{}) }

func TestCommentsPostgres(t *testing.T) {
	runComments(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

type commentClient struct {
	base string
	doc  *openapitest.Document
}

type commentReply struct {
	status int
	header http.Header
	body   []byte
}

func (r commentReply) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

// do sends one request as the administrator, checks the status, and
// validates request and response against the document (an invalid request
// on purpose skips the request check).
func (c commentClient) do(t *testing.T, want int, method, path, body string, hdr ...string) commentReply {
	t.Helper()
	return c.exchange(t, true, want, method, path, body, hdr...)
}

// undeclared is do for a status the document does not declare for the
// operation: 304 on the comment reads (ETag/If-None-Match as on every other
// CMS read, docs/api-reference.md §3) and 400 for a non-numeric comment id. The
// response is then checked for shape (empty 304, ProblemDetails) only.
func (c commentClient) undeclared(t *testing.T, want int, method, path, body string, hdr ...string) commentReply {
	t.Helper()
	return c.exchange(t, false, want, method, path, body, hdr...)
}

func (c commentClient) exchange(t *testing.T, declared bool, want int, method, path, body string, hdr ...string) commentReply {
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
	req.SetBasicAuth("admin", adminPassword)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := commentReply{status: resp.StatusCode, header: resp.Header, body: b}
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, b)
	}
	ct := r.header.Get("Content-Type")
	switch {
	case want == http.StatusNotModified:
		if len(b) != 0 || r.header.Get("ETag") == "" {
			t.Errorf("%s %s: 304 with body %q, ETag %q", method, path, b, r.header.Get("ETag"))
		}
	case want >= 400:
		if !strings.HasPrefix(ct, "application/problem+json") {
			t.Errorf("%s %s: %d is not ProblemDetails: %s %s", method, path, want, ct, b)
		}
	case len(b) > 0 && !strings.HasPrefix(ct, "application/json"):
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if want != http.StatusBadRequest {
		if err := c.doc.ValidateRequest(req, reqBody); err != nil {
			t.Errorf("test sends a request the document rejects: %v", err)
		}
	}
	if !declared {
		return r
	}
	if err := c.doc.ValidateResponse(req, reqBody, resp, b); err != nil {
		t.Errorf("%s %s: contract violation: %v\nbody: %.600s", method, path, err, b)
	}
	return r
}

func (r commentReply) detail(t *testing.T) string {
	t.Helper()
	d, _ := r.object(t)["detail"].(string)
	return d
}

func runComments(t *testing.T, store app.Component) {
	base, _ := startSystem(t, store)
	c := commentClient{base: base, doc: contractDoc(t)}

	// Create on the default branch, on object 40 (typeBranch, a system
	// object). The author is the authenticated user.
	r := c.do(t, 200, "POST", "/comments", `{"branchId":4,"objectRef":40,"body":"<div>Looks good</div>"}`).object(t)
	id := int64(r["id"].(float64))
	if id <= 0 || r["objectRef"] != float64(40) || r["branchRef"] != float64(4) || r["user"] != "admin" ||
		r["deleted"] != false || r["body"] != "<div>Looks good</div>" || r["created"] != r["modified"] {
		t.Fatalf("created comment = %v", r)
	}
	for _, k := range []string{"created", "modified"} {
		if s, _ := r[k].(string); !utcTime.MatchString(s) {
			t.Errorf("%s = %q is not a UTC timestamp", k, s)
		}
	}
	second := c.do(t, 200, "POST", "/comments", `{"branchId":4,"objectRef":10,"body":"<div xmlns=\"http://www.w3.org/1999/xhtml\"><p>Hi <span>@admin</span></p></div>"}`).object(t)
	id2 := int64(second["id"].(float64))
	if id2 <= id {
		t.Fatalf("ids not increasing: %d then %d", id, id2)
	}

	// Bodies: a <div> root, nothing that runs code; the detail names it.
	for _, tc := range []struct{ body, want string }{
		{`"<p>x</p>"`, "<div> root"},
		{`"Looks good"`, "<div> root"},
		{`null`, "empty"},
		{`"<div><script>alert(1)</script></div>"`, "script elements"},
		{`"<div><img src=\"x\" onerror=\"alert(1)\"/></div>"`, "event handler attributes (onerror on <img>)"},
		{`"<div><a href=\"javascript:alert(1)\">x</a></div>"`, "javascript URLs"},
		{`"<div><iframe src=\"https://x\"/></div>"`, "iframe elements"},
		{`"<div><object/></div>"`, "object elements"},
		{`"<div><embed/></div>"`, "embed elements"},
		{`"<div>unclosed"`, "not well-formed"},
	} {
		body := fmt.Sprintf(`{"branchId":4,"objectRef":40,"body":%s}`, tc.body)
		if d := c.do(t, 400, "POST", "/comments", body).detail(t); !strings.Contains(d, tc.want) {
			t.Errorf("body %s: detail %q does not mention %q", tc.body, d, tc.want)
		}
	}
	c.do(t, 404, "POST", "/comments", `{"branchId":999999,"objectRef":40,"body":"<div/>"}`)
	c.do(t, 404, "POST", "/comments", `{"branchId":4,"objectRef":999999,"body":"<div/>"}`)

	// Read one, with ETag and If-None-Match.
	g := c.do(t, 200, "GET", fmt.Sprintf("/comments/%d", id), "")
	tag := g.header.Get("ETag")
	if tag == "" || g.object(t)["body"] != "<div>Looks good</div>" {
		t.Fatalf("GET comment: ETag %q, body %s", tag, g.body)
	}
	c.undeclared(t, 304, "GET", fmt.Sprintf("/comments/%d", id), "", "If-None-Match", tag)
	c.do(t, 404, "GET", "/comments/999999", "")
	c.undeclared(t, 400, "GET", "/comments/abc", "")

	// Lists: id descending, paging with a continuation token.
	first := c.do(t, 200, "GET", "/comments?take=1", "")
	page := first.object(t)
	items := page["cmsComments"].([]any)
	cont, _ := page["continue"].(string)
	if page["count"] != float64(1) || len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != id2 || cont == "" {
		t.Fatalf("first page = %s", first.body)
	}
	c.undeclared(t, 304, "GET", "/comments?take=1", "", "If-None-Match", first.header.Get("ETag"))
	last := c.do(t, 200, "GET", "/comments?take=1&continue="+cont, "")
	page = last.object(t)
	items = page["cmsComments"].([]any)
	if len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != id {
		t.Fatalf("second page = %s", last.body)
	}
	if v, present := page["continue"]; !present || v != nil {
		t.Fatalf("last page: continue must be null, got %s", last.body)
	}
	all := c.do(t, 200, "GET", "/comments", "").object(t)
	if all["count"] != float64(2) || all["continue"] != nil {
		t.Fatalf("all comments = %v", all)
	}
	count := func(query string) int {
		t.Helper()
		return int(c.do(t, 200, "GET", "/comments?"+query, "").object(t)["count"].(float64))
	}
	if n := count("objectRef=10"); n != 1 {
		t.Errorf("objectRef=10: %d comments", n)
	}
	if n := count("branchRef=4&user=ADMIN&isDeleted=false"); n != 2 {
		t.Errorf("branchRef=4&user=ADMIN&isDeleted=false: %d comments", n)
	}
	if n := count("user=nobody"); n != 0 {
		t.Errorf("user=nobody: %d comments", n)
	}
	c.do(t, 404, "GET", "/comments?branchRef=999999", "")
	c.do(t, 400, "GET", "/comments?continue=garbage!", "")
	c.do(t, 400, "GET", "/comments?take=1&objectRef=10&continue="+cont, "") // token of another list

	// Update: 200 with an empty body; the ETag changes.
	up := c.do(t, 200, "PATCH", fmt.Sprintf("/comments/%d", id), `{"body":"<div>Edited</div>"}`)
	if len(up.body) != 0 {
		t.Errorf("PATCH body = %q, want empty", up.body)
	}
	g2 := c.do(t, 200, "GET", fmt.Sprintf("/comments/%d", id), "", "If-None-Match", tag)
	if m := g2.object(t); m["body"] != "<div>Edited</div>" || m["created"] != r["created"] || g2.header.Get("ETag") == tag {
		t.Fatalf("after PATCH: %s (ETag %q, was %q)", g2.body, g2.header.Get("ETag"), tag)
	}
	c.do(t, 400, "PATCH", fmt.Sprintf("/comments/%d", id), `{"body":"<div onclick=\"x()\">x</div>"}`)
	c.do(t, 404, "PATCH", "/comments/999999", `{"body":"<div/>"}`)

	// Delete: soft, 200 empty; a deleted comment cannot be changed (404).
	del := c.do(t, 200, "DELETE", fmt.Sprintf("/comments/%d", id), "")
	if len(del.body) != 0 {
		t.Errorf("DELETE body = %q, want empty", del.body)
	}
	if m := c.do(t, 200, "GET", fmt.Sprintf("/comments/%d", id), "").object(t); m["deleted"] != true {
		t.Fatalf("after DELETE: %v", m)
	}
	c.do(t, 404, "PATCH", fmt.Sprintf("/comments/%d", id), `{"body":"<div>again</div>"}`)
	c.do(t, 404, "DELETE", fmt.Sprintf("/comments/%d", id), "")
	c.do(t, 404, "DELETE", "/comments/999999", "")
	if n := count("isDeleted=true"); n != 1 {
		t.Errorf("isDeleted=true: %d comments", n)
	}
	if n := count("isDeleted=false"); n != 1 {
		t.Errorf("isDeleted=false: %d comments", n)
	}
}
