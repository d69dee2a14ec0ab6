package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// grantsWorld is a system with two child branches A and B of the default
// branch, a confidential object on each, and the user "reader" with a read
// grant on A only.
type grantsWorld struct {
	admin, reader   httpClient // Management
	adminI, readerI httpClient // Index
	adminD, readerD httpClient // Delivery
	a, b            int64
	readerID        int64
	otherUserID     int64 // a user the reader may not see
	version         int64 // the last write's transaction
}

// grantsSystems runs the system to test: the whole system in one process
// on embedded components, or (with the real components configured) each
// group as its own service on PostgreSQL, NATS, Elasticsearch and Redis,
// where Index and Delivery check grants without the store.
var grantsSystems = []struct {
	name  string
	start func(t *testing.T) (mgmt, index, deliv string)
}{
	{"embedded", func(t *testing.T) (string, string, string) {
		base := "http://" + startServer(t).HTTPAddr()
		return base, base, base
	}},
	{"distributed", func(t *testing.T) (string, string, string) {
		config, _ := isolatedDistributed(t, "grants")
		serve := func(target string) string { return "http://" + startConfigured(t, config(target)).HTTPAddr() }
		mgmt := serve(TargetManagement)
		serve(TargetIndexer)
		return mgmt, serve(TargetIndex), serve(TargetDelivery)
	}},
}

// eachGrantsSystem runs test on every system of grantsSystems.
func eachGrantsSystem(t *testing.T, test func(t *testing.T, w grantsWorld)) {
	for _, sys := range grantsSystems {
		t.Run(sys.name, func(t *testing.T) { test(t, newGrantsWorld(t, sys.start)) })
	}
}

func newGrantsWorld(t *testing.T, start func(t *testing.T) (string, string, string)) grantsWorld {
	t.Helper()
	mgmt, index, deliv := start(t)
	w := grantsWorld{
		admin: httpClient{t, mgmt, "admin", "test-password"}, reader: httpClient{t, mgmt, "reader", "reader-pw"},
		adminI: httpClient{t, index, "admin", "test-password"}, readerI: httpClient{t, index, "reader", "reader-pw"},
		adminD: httpClient{t, deliv, "admin", "test-password"}, readerD: httpClient{t, deliv, "reader", "reader-pw"},
	}
	branch := func(name string) int64 {
		r := w.admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
			`{"comment":"branch","values":[`+v(1000, 201, name)+`,`+v(4000, 0, 4)+`]}`)
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
	w.a, w.b = branch("Alpha"), branch("Bravo")
	typ := w.admin.create(obj(0, "doc", v(1000, 201, "Doc"))).CreatedObjectIDs[0]
	for _, b := range []struct {
		id   int64
		name string
	}{{w.a, "Alpha confidential"}, {w.b, "Bravo confidential"}} {
		r := w.admin.must(http.StatusCreated, http.MethodPost, fmt.Sprintf("/apis/cms/v1/branches/%d/objects", b.id),
			`{"objects":[`+obj(typ, "", v(1000, 201, b.name))+`]}`)
		w.version = decodeWrite(t, r).Transaction.ID
	}
	users := w.admin.create(
		obj(110, "", v(1100, 0, "reader"), v(1000, 201, "Reader"), v(1101, 0, "reader-pw"), v(1104, 0, w.a)),
		obj(110, "", v(1100, 0, "other"), v(1000, 201, "Other"), v(1101, 0, "other-pw"), v(1102, 0, true)))
	w.readerID, w.otherUserID = users.CreatedObjectIDs[0], users.CreatedObjectIDs[1]
	w.version = users.Transaction.ID
	return w
}

func decodeWrite(t *testing.T, r httpResult) write {
	t.Helper()
	var out write
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("write answer %s: %v", r.body, err)
	}
	return out
}

// fresh is the Index read-your-writes part of a request body.
func (w grantsWorld) fresh() string {
	return fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"00:00:10"`, w.version)
}

// TestIndexNeedsReadGrants: every Index operation on a branch shows only a
// branch the caller may read: another one (also the default branch above
// the grant) answers like a branch that does not exist, 200 with nothing,
// and workItemOccurrences counts only the readable branches.
func TestIndexNeedsReadGrants(t *testing.T) { eachGrantsSystem(t, testIndexNeedsReadGrants) }

func testIndexNeedsReadGrants(t *testing.T, w grantsWorld) {
	ops := []struct{ path, body string }{
		{"objects", `{"filter":{"fullText":"confidential"},` + w.fresh() + `}`},
		{"objectCount", `{"filter":{"searchPhrase":"confidential"},` + w.fresh() + `}`},
		{"objectOccurrences", `{"attributes":[{"attrId":1000,"langId":201,"variantId":0}],` + w.fresh() + `}`},
		{"suggestions", `{"pattern":"conf","suggestDisplayName":true,` + w.fresh() + `}`},
		{"objectXmlLinkCount", `{"objectId":1,` + w.fresh() + `}`},
		{"comments", `{}`},
		{"commentCount", `{}`},
		{"commentOccurrences", `{"fields":["user"]}`},
	}
	for _, op := range ops {
		for _, b := range []int64{w.b, 4} {
			path := fmt.Sprintf("/apis/index/v1/branches/%d/%s", b, op.path)
			r := w.readerI.do(http.MethodPost, path, op.body)
			if r.code != http.StatusOK || strings.Contains(string(r.body), "confidential") || strings.Contains(string(r.body), `"count":1`) {
				t.Errorf("reader %s = %d, want 200 with nothing: %s", path, r.code, r.body)
			}
		}
	}
	// On its branch the reader finds its object, not the other branch's.
	r := w.readerI.must(http.StatusOK, http.MethodPost, fmt.Sprintf("/apis/index/v1/branches/%d/objects", w.a),
		`{"filter":{"fullText":"confidential"},`+w.fresh()+`}`)
	if names := itemNames(t, r); !slices.Equal(names, []string{"Alpha confidential"}) {
		t.Errorf("reader search on A: %v", names)
	}
	work := func(c httpClient) []int64 {
		r := c.must(http.StatusOK, http.MethodPost, "/apis/index/v1/workItemOccurrences", `{`+w.fresh()+`}`)
		var out struct {
			BranchOccurrences struct {
				ValueOccurrences []struct {
					Value int64 `json:"value"`
					Count int   `json:"count"`
				} `json:"valueOccurrences"`
			} `json:"branchOccurrences"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		var branches []int64
		for _, o := range out.BranchOccurrences.ValueOccurrences {
			branches = append(branches, o.Value)
		}
		slices.Sort(branches)
		return branches
	}
	if got := work(w.adminI); !slices.Equal(got, []int64{w.a, w.b}) {
		t.Errorf("admin work items on %v, want %v", got, []int64{w.a, w.b})
	}
	if got := work(w.readerI); !slices.Equal(got, []int64{w.a}) {
		t.Errorf("reader work items on %v, want only %d", got, w.a)
	}
}

func itemNames(t *testing.T, r httpResult) []string {
	t.Helper()
	var out struct {
		Objects []struct {
			ID          int64  `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	var names []string
	for _, o := range out.Objects {
		names = append(names, o.DisplayName)
	}
	return names
}

// TestUserObjectsAreAdminOnly: user objects (login names, flags, grants)
// are read by administrators and the user itself only, through
// Management, Index and Delivery alike; counts exclude them.
func TestUserObjectsAreAdminOnly(t *testing.T) { eachGrantsSystem(t, testUserObjectsAreAdminOnly) }

func testUserObjectsAreAdminOnly(t *testing.T, w grantsWorld) {
	a := strconv.FormatInt(w.a, 10)
	other, self := strconv.FormatInt(w.otherUserID, 10), strconv.FormatInt(w.readerID, 10)
	// Management: another user is 404 (inherited into A, where the reader
	// may read), its own user object is readable; the typed list of users
	// holds only itself.
	w.reader.must(http.StatusNotFound, http.MethodGet, "/apis/cms/v1/branches/"+a+"/objects/"+other, "")
	w.reader.must(http.StatusNotFound, http.MethodGet, "/apis/cms/v1/branches/"+a+"/objects?ids="+self+","+other, "")
	w.reader.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/"+a+"/objects/"+self, "")
	w.admin.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/"+a+"/objects/"+other, "")
	listIDs := func(c httpClient) []int64 {
		r := c.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/"+a+"/types/110/objects", "")
		var out struct {
			Objects []struct {
				Meta struct {
					ID int64 `json:"id"`
				} `json:"meta"`
			} `json:"objects"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		var ids []int64
		for _, o := range out.Objects {
			ids = append(ids, o.Meta.ID)
		}
		return ids
	}
	if got := listIDs(w.reader); !slices.Equal(got, []int64{w.readerID}) {
		t.Errorf("reader's user list %v, want only itself %d", got, w.readerID)
	}
	if got := listIDs(w.admin); !slices.Contains(got, w.otherUserID) || !slices.Contains(got, w.readerID) {
		t.Errorf("admin's user list %v lacks %d or %d", got, w.otherUserID, w.readerID)
	}
	// Index: the engine query excludes other users, so counts agree.
	count := func(c httpClient) int {
		r := c.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/"+a+"/objectCount",
			`{"filter":{"objectTypeIds":[110]},`+w.fresh()+`}`)
		var out struct {
			Count int `json:"count"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return out.Count
	}
	if n := count(w.readerI); n != 1 {
		t.Errorf("reader counts %d users on A, want 1 (itself)", n)
	}
	if n := count(w.adminI); n < 3 {
		t.Errorf("admin counts %d users on A, want at least 3", n)
	}
	r := w.readerI.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/"+a+"/objects",
		`{"filter":{"objectTypeIds":[110]},`+w.fresh()+`}`)
	if names := itemNames(t, r); !slices.Equal(names, []string{"Reader"}) {
		t.Errorf("reader's user search on A: %v, want only itself", names)
	}
	// Delivery never shows user objects.
	minV := strconv.FormatInt(w.version, 10)
	w.readerD.must(http.StatusNotFound, http.MethodGet, "/delivery/api/branches/"+a+"/objects/"+other, "", "X-Cms-Min-Version", minV)
	w.adminD.must(http.StatusNotFound, http.MethodGet, "/delivery/api/branches/"+a+"/objects/"+other, "", "X-Cms-Min-Version", minV)
}

// TestDeliveryBranchListIsFiltered: Delivery's branch list answers every
// user with the branches it may read (403 before for non-admins).
func TestDeliveryBranchListIsFiltered(t *testing.T) {
	eachGrantsSystem(t, testDeliveryBranchListIsFiltered)
}

func testDeliveryBranchListIsFiltered(t *testing.T, w grantsWorld) {
	ids := func(c httpClient) []int64 {
		r := c.must(http.StatusOK, http.MethodGet, "/delivery/api/branches", "", "X-Cms-Min-Version", strconv.FormatInt(w.version, 10))
		var list []struct {
			Meta struct {
				ID int64 `json:"id"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		var out []int64
		for _, b := range list {
			out = append(out, b.Meta.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(w.readerD); !slices.Equal(got, []int64{w.a}) {
		t.Errorf("reader's branches %v, want [%d]", got, w.a)
	}
	if got := ids(w.adminD); !slices.Equal(got, []int64{4, w.a, w.b}) {
		t.Errorf("admin's branches %v, want [4 %d %d]", got, w.a, w.b)
	}
	// Twice: the second answer comes from the caches and stays per user.
	if got := ids(w.readerD); !slices.Equal(got, []int64{w.a}) {
		t.Errorf("reader's branches (cached) %v, want [%d]", got, w.a)
	}
}
