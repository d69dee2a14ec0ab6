package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// TestLiveChangesGrandchildTypes: an object created on a branch and edited
// on that branch's child (a grandchild of the default branch) reaches a
// change stream of the grandchild filtered by the object's type: the
// types are looked up along the whole branch chain, not only on the
// event's branch and the default branch.
func TestLiveChangesGrandchildTypes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	srv := startConfigured(t, liveConfig(cfg))
	base := "http://" + srv.HTTPAddr()
	warmUp(t, base)
	admin := httpClient{t, base, "admin", "test-password"}
	branch := func(name string, parent int64) int64 {
		r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
			`{"comment":"branch","values":[`+v(1000, 201, name)+`,`+v(4000, 0, parent)+`]}`)
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
	typ := admin.create(obj(0, "grandType", v(1000, 201, "Grand type"))).CreatedObjectIDs[0]
	middle := branch("Middle", 4)
	grand := branch("Grand", middle)
	r := admin.must(http.StatusCreated, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/%d/objects", middle),
		`{"objects":[`+obj(typ, "", v(1000, 201, "on the middle branch"))+`]}`)
	var w write
	if err := json.Unmarshal(r.body, &w); err != nil || len(w.CreatedObjectIDs) != 1 {
		t.Fatalf("create on the middle branch: %s", r.body)
	}
	id := w.CreatedObjectIDs[0]
	// The grandchild is in the index (the stream of an unknown branch is 404).
	admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/%d/objects/%d", grand, id), "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")

	// The stream starts after the creation on the middle branch, which
	// belongs to it too (inherited) and may still be on its way to the
	// stream's feed when it opens (the read above waited for the index).
	s := openSSE(t, base, fmt.Sprintf("/delivery/api/branches/%d/changes?types=%d", grand, typ), "admin", "test-password", http.StatusOK,
		"Last-Event-ID", strconv.FormatInt(w.Transaction.ID, 10))
	r = admin.must(http.StatusOK, http.MethodPatch, fmt.Sprintf("/apis/cms/v1/branches/%d/objects", grand),
		fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, id, typ, v(1000, 201, "edited on the grandchild")))
	var u write
	if err := json.Unmarshal(r.body, &u); err != nil || u.Transaction.ID == 0 {
		t.Fatalf("edit on the grandchild: %s", r.body)
	}
	ev := s.next()
	var d struct {
		Kind      string  `json:"kind"`
		Branch    int64   `json:"branch"`
		ObjectIDs []int64 `json:"objectIds"`
		Types     []int64 `json:"types"`
	}
	if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
		t.Fatalf("data %q: %v", ev.data, err)
	}
	if ev.id != strconv.FormatInt(u.Transaction.ID, 10) || d.Kind != "updated" || d.Branch != grand ||
		!slices.Equal(d.ObjectIDs, []int64{id}) || !slices.Equal(d.Types, []int64{typ}) {
		t.Fatalf("got id %q data %s; want the update %d of object %d (type %d) on branch %d", ev.id, ev.data, u.Transaction.ID, id, typ, grand)
	}
}
