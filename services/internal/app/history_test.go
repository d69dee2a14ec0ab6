package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// historyPage is a GetObjectHistory answer.
type historyPage struct {
	Count    int     `json:"count"`
	Continue *string `json:"continue"`
	Entries  []struct {
		Transaction struct {
			ID      int64   `json:"id"`
			User    *string `json:"user"`
			Comment *string `json:"comment"`
		} `json:"transaction"`
		Kind    string `json:"kind"`
		Changes []struct {
			Attribute int `json:"attribute"`
			Language  int `json:"language"`
			Old       []struct {
				Value any `json:"value"`
			} `json:"oldValues"`
			New []struct {
				Value any `json:"value"`
			} `json:"newValues"`
		} `json:"changes"`
	} `json:"entries"`
}

// keys renders the entries as "kind old>new" of their first change.
func (p historyPage) keys() string {
	out := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		out[i] = e.Kind
		for _, c := range e.Changes {
			side := func(vs []struct {
				Value any `json:"value"`
			}) string {
				s := make([]string, len(vs))
				for j, v := range vs {
					s[j] = fmt.Sprint(v.Value)
				}
				return strings.Join(s, ",")
			}
			out[i] += fmt.Sprintf(" %d:%s>%s", c.Attribute, side(c.Old), side(c.New))
		}
	}
	return strings.Join(out, "; ")
}

// call sends one exchange, checks it against the served Management
// document and decodes the answer into out (when not nil).
func (c httpClient) call(want int, method, target, body string, out any) {
	c.t.Helper()
	r := c.must(want, method, target, body)
	loadServedDoc(c.t, "Management").check(c.t, method, target, body, r)
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			c.t.Fatalf("%s %s: %s: %v", method, target, r.body, err)
		}
	}
}

// TestObjectHistoryEmbedded: history, asOf and revert over HTTP on SQLite.
func TestObjectHistoryEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	runHistoryScenario(t, "http://"+startConfigured(t, cfg).HTTPAddr(), true)
}

// TestObjectHistoryDistributed: the same on PostgreSQL (the Management
// process of a distributed system).
func TestObjectHistoryDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "history")
	runHistoryScenario(t, "http://"+startConfigured(t, config(TargetManagement)).HTTPAddr(), false)
}

// waitJob waits up to 30 s for job to succeed when a runner runs jobs.
func waitJob(c httpClient, job int64, runner bool) {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); runner; time.Sleep(100 * time.Millisecond) {
		var j struct {
			State int `json:"state"`
		}
		c.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d", job), "", &j)
		if j.State == 2 {
			return
		}
		if j.State == 3 || time.Now().After(deadline) {
			c.t.Fatalf("job %d: state %d", job, j.State)
		}
	}
}

// runHistoryScenario runs on base; runsJobs: a job runner serves it.
func runHistoryScenario(t *testing.T, base string, runsJobs bool) {
	admin := httpClient{t, base, "admin", "test-password"}
	typ := admin.create(obj(0, "memo", v(1000, 201, "Memo"))).CreatedObjectIDs[0]
	created := admin.create(obj(typ, "", v(1000, 201, "first")), obj(typ, "", v(1000, 201, "other")))
	memo, other := created.CreatedObjectIDs[0], created.CreatedObjectIDs[1]
	tx1 := created.Transaction.ID
	var w write
	admin.call(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"comment":"second","objects":[{"meta":{"id":%d},"values":[%s]},{"meta":{"id":%d},"values":[%s]}]}`,
			memo, v(1000, 201, "second"), other, v(1000, 201, "changed")), &w)
	tx2 := w.Transaction.ID
	admin.call(http.StatusOK, http.MethodPost, "/apis/cms/v1/comments",
		fmt.Sprintf(`{"branchId":4,"objectRef":%d,"body":"<div xmlns=\"http://www.w3.org/1999/xhtml\"><p>ok</p></div>"}`, memo), nil)
	// A job on the memo (an export: it reads, writes nothing) is no change
	// of it either, nor is its bookkeeping while it runs.
	var job struct {
		ID int64 `json:"id"`
	}
	admin.call(http.StatusOK, http.MethodPost, "/apis/cms/v1/jobs",
		fmt.Sprintf(`{"branchId":4,"jobDefinitionId":1200,"objIds":[%d],"language":0}`, memo), &job)
	waitJob(admin, job.ID, runsJobs)
	admin.call(http.StatusOK, http.MethodDelete, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"comment":"gone","objectIds":["%d"]}`, memo), &w)
	tx3 := w.Transaction.ID

	history := fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/history", memo)
	var page historyPage
	admin.call(http.StatusOK, http.MethodGet, history, "", &page)
	if got, want := page.keys(), "deleted; updated 1000:first>second; created 1000:>first"; got != want || page.Count != 3 || page.Continue != nil {
		t.Fatalf("history: got %q (count %d, continue %v), want %q", got, page.Count, page.Continue, want)
	}
	if e := page.Entries[1].Transaction; e.ID != tx2 || e.User == nil || *e.User != "admin" || e.Comment == nil || *e.Comment != "second" {
		t.Fatalf("the update's transaction: %+v", e)
	}
	admin.call(http.StatusOK, http.MethodGet, history+"?take=2", "", &page)
	if page.Count != 2 || page.Continue == nil {
		t.Fatalf("take=2: %+v", page)
	}
	admin.call(http.StatusOK, http.MethodGet, history+"?take=2&continue="+*page.Continue, "", &page)
	if page.keys() != "created 1000:>first" || page.Continue != nil {
		t.Fatalf("second page: %q, continue %v", page.keys(), page.Continue)
	}
	admin.must(http.StatusBadRequest, http.MethodGet, history+"?take=101", "")

	// asOf on GetObject and GetObjects.
	type object struct {
		Meta struct {
			ID      int64 `json:"id"`
			Deleted bool  `json:"deleted"`
		} `json:"meta"`
		Values []struct {
			Value any `json:"value"`
		} `json:"values"`
	}
	read := func(tx int64) object {
		var o object
		admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d?asOf=%d", memo, tx), "", &o)
		return o
	}
	if o := read(tx1); o.Meta.Deleted || len(o.Values) != 1 || o.Values[0].Value != "first" {
		t.Fatalf("as of %d: %+v", tx1, o)
	}
	if o := read(tx3); !o.Meta.Deleted || o.Values[0].Value != "second" {
		t.Fatalf("as of %d: %+v", tx3, o)
	}
	var list struct {
		Objects []object `json:"objects"`
	}
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects?ids=%d,%d&asOf=%d", memo, other, tx1), "", &list)
	if len(list.Objects) != 2 || list.Objects[1].Values[0].Value != "other" {
		t.Fatalf("GetObjects as of %d: %+v", tx1, list)
	}
	admin.call(http.StatusNotFound, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d?asOf=%d", memo, tx1-1), "", nil)
	admin.call(http.StatusBadRequest, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d?asOf=%d", memo, tx3+1000), "", nil)

	// Revert the deleted memo to tx1: one new transaction, the object is
	// back, the history keeps what came between.
	var rev struct {
		RevertedObjects int `json:"revertedObjects"`
		Transaction     struct {
			ID      int64  `json:"id"`
			Comment string `json:"comment"`
		} `json:"transaction"`
	}
	admin.call(http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/revert", memo),
		fmt.Sprintf(`{"transaction":%d,"comment":"undo"}`, tx1), &rev)
	if rev.RevertedObjects != 1 || rev.Transaction.Comment != fmt.Sprintf("undo [reverted object %d to transaction %d]", memo, tx1) {
		t.Fatalf("revert: %+v", rev)
	}
	if o := read(rev.Transaction.ID); o.Meta.Deleted || o.Values[0].Value != "first" {
		t.Fatalf("after the revert: %+v", o)
	}
	admin.call(http.StatusOK, http.MethodGet, history, "", &page)
	if got := page.keys(); !strings.HasPrefix(got, "restored 1000:second>first; deleted; updated") || page.Entries[0].Transaction.ID != rev.Transaction.ID {
		t.Fatalf("history after the revert: %q", got)
	}

	// If-Match: a stale tag is 412 and writes nothing; the current ETag
	// of the object makes the revert go through.
	revert := fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/revert", memo)
	admin.must(http.StatusPreconditionFailed, http.MethodPost, revert, fmt.Sprintf(`{"transaction":%d}`, tx2), "If-Match", `"0"`)
	var now object
	r := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d", memo), "")
	if err := json.Unmarshal(r.body, &now); err != nil || now.Values[0].Value != "first" {
		t.Fatalf("after the refused revert: %s (%v)", r.body, err)
	}
	etag := r.header.Get("ETag")
	admin.must(http.StatusOK, http.MethodPost, revert, fmt.Sprintf(`{"transaction":%d}`, tx1), "If-Match", etag)

	// The batch form: both objects to tx1 (memo already is: one changes).
	admin.call(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches/4/objects/revert",
		fmt.Sprintf(`{"objectIds":["%d","%d"],"transaction":%d,"attributes":["1000"]}`, memo, other, tx1), &rev)
	if rev.RevertedObjects != 1 {
		t.Fatalf("batch revert: %+v", rev)
	}
	var o object
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d", other), "", &o)
	if o.Values[0].Value != "other" {
		t.Fatalf("after the batch revert: %+v", o)
	}
	admin.call(http.StatusBadRequest, http.MethodPost, "/apis/cms/v1/branches/4/objects/revert",
		fmt.Sprintf(`{"objectIds":["%d"],"transaction":%d}`, memo, rev.Transaction.ID+1000), nil)
	admin.call(http.StatusNotFound, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/4/objects/%d/revert", memo),
		fmt.Sprintf(`{"transaction":%d}`, tx1-1), nil)
}
