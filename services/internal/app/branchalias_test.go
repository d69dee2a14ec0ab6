package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// groupBases are the base URLs serving each API group.
type groupBases struct{ mgmt, deliv, index, rendering string }

// groupSystems runs the whole system in one process on embedded
// components, or (with the real components configured) each group as its
// own service on PostgreSQL, NATS, Elasticsearch and Redis.
var groupSystems = []struct {
	name  string
	start func(t *testing.T) groupBases
}{
	{"embedded", func(t *testing.T) groupBases {
		base := "http://" + startServer(t).HTTPAddr()
		return groupBases{base, base, base, base}
	}},
	{"distributed", func(t *testing.T) groupBases {
		config, _ := isolatedDistributed(t, "alias")
		serve := func(target string) string { return "http://" + startConfigured(t, config(target)).HTTPAddr() }
		b := groupBases{mgmt: serve(TargetManagement)}
		serve(TargetIndexer)
		b.deliv, b.index, b.rendering = serve(TargetDelivery), serve(TargetIndex), serve(TargetRendering)
		return b
	}},
}

// TestBranchAliasDraft: "draft" addresses the default branch 4 in all
// four groups, for the handlers and for authorization.
func TestBranchAliasDraft(t *testing.T) {
	for _, sys := range groupSystems {
		t.Run(sys.name, func(t *testing.T) { testBranchAliasDraft(t, sys.start(t)) })
	}
}

func testBranchAliasDraft(t *testing.T, b groupBases) {
	admin := httpClient{t, b.mgmt, "admin", "test-password"}
	adminD := httpClient{t, b.deliv, "admin", "test-password"}
	adminI := httpClient{t, b.index, "admin", "test-password"}
	adminR := httpClient{t, b.rendering, "admin", "test-password"}
	typ := admin.create(obj(0, "note", v(1000, 201, "Note"))).CreatedObjectIDs[0]
	// A user without grants, indexed before the reads below wait for a later write.
	admin.create(obj(110, "", v(1100, 0, "nogrants"), v(1000, 201, "No grants"), v(1101, 0, "nogrants-pw")))

	// The alias: Management writes and reads branch 4 through "draft".
	if id := metaID(t, admin.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/draft", "")); id != 4 {
		t.Errorf("Management GET /branches/draft is branch %d, want 4", id)
	}
	first := decodeWrite(t, admin.must(http.StatusCreated, http.MethodPost, "/apis/cms/v1/branches/draft/objects",
		`{"objects":[`+obj(typ, "first", v(1000, 201, "Aliasfirst"))+`]}`))
	admin.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/4/objects/first", "")
	admin.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/draft/types/note/objects", "")
	// Delivery, Index and Rendering read branch 4 through "draft".
	minVersion := fmt.Sprint(first.Transaction.ID)
	adminD.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/draft/objects/first", "", "X-Cms-Min-Version", minVersion)
	if n := len(decodeList(t, adminD.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/draft/types/note/objects", "",
		"X-Cms-Min-Version", minVersion)).Objs); n != 1 {
		t.Errorf("Delivery list on draft: %d objects, want 1", n)
	}
	search := func(branch, word string, version int64) []string {
		return itemNames(t, adminI.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/"+branch+"/objects",
			fmt.Sprintf(`{"filter":{"fullText":%q},"minChangeTrackingVersion":%d,"maxWaitTime":"00:00:10"}`, word, version)))
	}
	if names := search("draft", "Aliasfirst", first.Transaction.ID); !slices.Equal(names, []string{"Aliasfirst"}) {
		t.Errorf("Index search on draft: %v", names)
	}
	// Rendering accepts the alias (a branch parameter it could not read
	// would be 400 or 404).
	adminR.must(http.StatusOK, http.MethodGet, "/apis/rendering/v1/branches/draft/css/app-styles.css", "")

	// Authorization resolves the alias too: a user without grants is
	// refused on branch 4 (403), not told the branch is unknown (404).
	refused := []struct{ base, method, path, body string }{
		{b.mgmt, http.MethodGet, "/apis/cms/v1/branches/draft/objects/first", ""},
		{b.deliv, http.MethodGet, "/delivery/api/branches/draft/objects/first", ""},
	}
	if b.rendering == b.mgmt { // a Rendering service on its own opens no store: only the configured administrator logs in
		refused = append(refused, struct{ base, method, path, body string }{
			b.rendering, http.MethodGet, "/apis/rendering/v1/branches/draft/css/app-styles.css", ""})
	}
	for _, c := range refused {
		httpClient{t, c.base, "nogrants", "nogrants-pw"}.must(http.StatusForbidden, c.method, c.path, c.body)
	}
	// A list (every Index operation on a branch) answers it as a branch
	// that does not exist: nothing.
	if r := (httpClient{t, b.index, "nogrants", "nogrants-pw"}).must(http.StatusOK, http.MethodPost,
		"/apis/index/v1/branches/draft/objectCount", `{}`); !strings.Contains(string(r.body), `"count":0`) {
		t.Errorf("Index count on draft without grants: %s, want 0", r.body)
	}
	// Which branch wins when one carries the ApiIdentifier "draft" is
	// covered in pkg/delivery (TestBranchAliasDraft): the API gives
	// branches no ApiIdentifier.
}

// metaID is the meta.id of a Management answer holding one object.
func metaID(t *testing.T, r httpResult) int64 {
	t.Helper()
	var out struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.Meta.ID == 0 {
		t.Fatalf("no meta.id in %s", r.body)
	}
	return out.Meta.ID
}
