package management_test

import (
	"fmt"
	"strings"
	"testing"

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

func runComments(t *testing.T, store app.Component) {
	base, _ := startSystem(t, store)
	c := docClient{base: base, doc: contractDoc(t)}

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
	if n := count("branchRef=999999"); n != 0 { // an unknown branch has none (no 404: lists tell no branch apart)
		t.Errorf("branchRef=999999: %d comments", n)
	}
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
