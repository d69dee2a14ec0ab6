package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// branchDiff is a GetBranchDiff answer.
type branchDiff struct {
	Branch   int64   `json:"branch"`
	Parent   int64   `json:"parent"`
	Count    int     `json:"count"`
	Continue *string `json:"continue"`
	Objects  []struct {
		Object   int64  `json:"object"`
		Kind     string `json:"kind"`
		Conflict bool   `json:"conflict"`
		Changes  []struct {
			Attribute int64 `json:"attribute"`
			Values    []struct {
				Value any `json:"value"`
			} `json:"values"`
			Base []struct {
				Value any `json:"value"`
			} `json:"baseValues"`
			Parent []struct {
				Value any `json:"value"`
			} `json:"parentValues"`
			Conflict bool `json:"conflict"`
		} `json:"changes"`
	} `json:"objects"`
}

// promoteAnswer is a PromoteBranch answer.
type promoteAnswer struct {
	DryRun          bool `json:"dryRun"`
	PromotedObjects int  `json:"promotedObjects"`
	Created         int  `json:"created"`
	ConflictCount   int  `json:"conflictCount"`
	Transaction     *struct {
		ID        int64 `json:"id"`
		BranchRef int64 `json:"branchRef"`
	} `json:"transaction"`
}

// TestPromoteEmbedded: diff and promote over HTTP on cms run.
func TestPromoteEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	runPromoteScenario(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

// TestPromoteDistributed: the same on PostgreSQL, NATS, Elasticsearch and
// Redis (cms serve's components, all targets in one process).
func TestPromoteDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "promote")
	runPromoteScenario(t, "http://"+startConfigured(t, config(TargetAll)).HTTPAddr())
}

// runPromoteScenario: a child branch creates, deletes and overrides; the
// diff lists it with base and parent values and the conflict; a promote
// is refused on the conflict, a dry run writes nothing, child-wins
// promotes all in one transaction that Delivery serves whole, the child
// then holds nothing of its own, and promoting again writes nothing.
func runPromoteScenario(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	typ := admin.create(obj(0, "memo", v(1000, 201, "Memo"))).CreatedObjectIDs[0]
	made := admin.create(obj(typ, "", v(1000, 201, "one")), obj(typ, "", v(1000, 201, "two")))
	one, two := made.CreatedObjectIDs[0], made.CreatedObjectIDs[1]
	r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
		`{"comment":"branch","values":[`+v(1000, 201, "Release")+`,`+v(4000, 0, 4)+`]}`)
	var br struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &br); err != nil || br.Meta.ID == 0 {
		t.Fatalf("create branch: %s", r.body)
	}
	child := fmt.Sprintf("/apis/cms/v1/branches/%d", br.Meta.ID)
	var w write
	admin.call(http.StatusCreated, http.MethodPost, child+"/objects", `{"objects":[`+obj(typ, "", v(1000, 201, "new"))+`]}`, &w)
	created := w.CreatedObjectIDs[0]
	admin.call(http.StatusOK, http.MethodPatch, child+"/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[%s]},{"meta":{"id":%d},"values":[%s]}]}`,
		one, v(1000, 201, "one, edited"), two, v(1000, 201, "two on the child")), &w)
	admin.call(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects", fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[%s]}]}`,
		two, v(1000, 201, "two on the parent")), &w)

	var d branchDiff
	admin.call(http.StatusOK, http.MethodGet, child+"/diff", "", &d)
	got := ""
	for _, o := range d.Objects {
		got += fmt.Sprintf("%d %s %v;", o.Object, o.Kind, o.Conflict)
	}
	if want := fmt.Sprintf("%d updated false;%d updated true;%d created false;", one, two, created); got != want || d.Parent != 4 || d.Count != 3 || d.Continue != nil {
		t.Fatalf("diff: %s (parent %d, count %d), want %s", got, d.Parent, d.Count, want)
	}
	if c := d.Objects[1].Changes[0]; c.Values[0].Value != "two on the child" || c.Base[0].Value != "two" || c.Parent[0].Value != "two on the parent" || !c.Conflict {
		t.Fatalf("the conflicting change: %+v", c)
	}
	admin.call(http.StatusOK, http.MethodGet, child+"/diff?take=2", "", &d)
	if d.Count != 2 || d.Continue == nil {
		t.Fatalf("take=2: %+v", d)
	}
	admin.call(http.StatusOK, http.MethodGet, child+"/diff?take=2&continue="+*d.Continue, "", &d)
	if d.Count != 1 || d.Objects[0].Object != created || d.Continue != nil {
		t.Fatalf("second page: %+v", d)
	}
	admin.call(http.StatusBadRequest, http.MethodGet, child+"/diff?take=201", "", nil)
	admin.call(http.StatusBadRequest, http.MethodGet, "/apis/cms/v1/branches/4/diff", "", nil)

	admin.call(http.StatusUnprocessableEntity, http.MethodPost, child+"/promote", `{}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/promote", `{"conflicts":"maybe"}`, nil)
	var p promoteAnswer
	admin.call(http.StatusOK, http.MethodPost, child+"/promote", `{"dryRun":true}`, &p)
	if !p.DryRun || p.PromotedObjects != 3 || p.ConflictCount != 1 || p.Created != 1 || p.Transaction != nil {
		t.Fatalf("dry run: %+v", p)
	}
	admin.call(http.StatusOK, http.MethodPost, child+"/promote", `{"conflicts":"child-wins","comment":"release"}`, &p)
	if p.PromotedObjects != 3 || p.Transaction == nil || p.Transaction.BranchRef != 4 {
		t.Fatalf("promote: %+v", p)
	}
	promoteTx := p.Transaction.ID
	wait := []string{"X-Cms-Min-Version", strconv.FormatInt(promoteTx, 10), "X-Cms-Max-Wait", "30s"}
	var names []string
	for _, o := range decodeList(t, admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/memo/objects", "", wait...)).Objs {
		names = append(names, o.DisplayName)
	}
	slices.Sort(names)
	if want := "[new one, edited two on the child]"; fmt.Sprint(names) != want {
		t.Fatalf("Delivery on the parent after the promote: %s, want %s", names, want)
	}
	// The child inherits what it held: the same values, none of its own.
	names = nil
	for _, o := range decodeList(t, admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/%d/types/memo/objects", br.Meta.ID), "", wait...)).Objs {
		names = append(names, o.DisplayName)
	}
	slices.Sort(names)
	if want := "[new one, edited two on the child]"; fmt.Sprint(names) != want {
		t.Fatalf("Delivery on the child after the promote: %s, want %s", names, want)
	}
	var local struct {
		Count int `json:"count"`
	}
	res := admin.must(http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/index/v1/branches/%d/objectCount", br.Meta.ID),
		fmt.Sprintf(`{"filter":{"objectTypeIds":[%d],"hasLocalValues":true},"minChangeTrackingVersion":%d,"maxWaitTime":"00:00:30"}`, typ, promoteTx))
	if err := json.Unmarshal(res.body, &local); err != nil || local.Count != 0 {
		t.Fatalf("the child's index after the promote: %d objects with values of its own, want 0", local.Count)
	}
	admin.call(http.StatusOK, http.MethodGet, child+"/diff", "", &d)
	if d.Count != 0 {
		t.Fatalf("the child after the promote: %+v", d)
	}
	p = promoteAnswer{}
	admin.call(http.StatusOK, http.MethodPost, child+"/promote", `{"conflicts":"child-wins"}`, &p)
	if p.PromotedObjects != 0 || p.Transaction != nil {
		t.Fatalf("the same promote again: %+v", p)
	}

	// The promote reverted as one transaction: the new memo is deleted,
	// the edited ones have their values of before.
	var rev struct {
		RevertedObjects int `json:"revertedObjects"`
		Transaction     struct {
			ID int64 `json:"id"`
		} `json:"transaction"`
	}
	promoted := promoteTx
	admin.call(http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/4/transactions/%d/revert", promoted), `{"comment":"undo"}`, &rev)
	if rev.RevertedObjects != 3 {
		t.Fatalf("revert of the promote: %+v", rev)
	}
	names = nil
	wait = []string{"X-Cms-Min-Version", strconv.FormatInt(rev.Transaction.ID, 10), "X-Cms-Max-Wait", "30s"}
	for _, o := range decodeList(t, admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/memo/objects", "", wait...)).Objs {
		names = append(names, o.DisplayName)
	}
	slices.Sort(names)
	if want := "[one two on the parent]"; fmt.Sprint(names) != want {
		t.Fatalf("Delivery after the revert of the promote: %s, want %s", names, want)
	}
	admin.call(http.StatusBadRequest, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/4/transactions/%d/revert", rev.Transaction.ID+1000), `{}`, nil)
}
