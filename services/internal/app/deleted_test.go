package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/openapitest"
)

// novaIndexDoc is NovaDB's Index document (services/index/testdata), error
// bodies accepted as application/problem+json (docs/api-reference.md §4).
func novaIndexDoc(t *testing.T) servedDoc {
	t.Helper()
	b, err := os.ReadFile("../../index/testdata/index-6.0.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := openapitest.Load(b, openapitest.WithContentTypeAlias("application/problem+json", "application/json"))
	if err != nil {
		t.Fatal(err)
	}
	return servedDoc{"NovaDB Index", d}
}

// contractClient sends as one user and validates every exchange against
// the document of its group.
type contractClient struct {
	c   httpClient
	doc servedDoc
}

func (cc contractClient) must(want int, method, path, body string, hdr ...string) httpResult {
	cc.c.t.Helper()
	r := cc.c.must(want, method, path, body, hdr...)
	cc.doc.check(cc.c.t, method, path, body, r)
	return r
}

// indexItem is the part of an Index ObjectItem the test reads.
type indexItem struct {
	ID      int64 `json:"id"`
	Deleted bool  `json:"deleted"`
}

// deliveryMeta is the part of a Delivery object the test reads.
type deliveryMeta struct {
	Meta struct {
		ID      int64 `json:"id"`
		Deleted bool  `json:"deleted"`
	} `json:"meta"`
}

// TestDeletedObjectsInIndexAndDelivery: a soft-deleted object (DELETE in
// Management, then listed there with meta.deleted) stays in the index with
// its flag. The Index group answers each value of filter.deleted as NovaDB's
// document describes it (true: deleted, false: not deleted, null: all) in
// search, by id, objectCount and objectOccurrences (deletedOccurrences);
// Delivery leaves it out of lists, counts, get by id and resolved
// references unless deleted=true. Every exchange is checked against the
// documents: NovaDB's for Management and Index, the served one for
// Delivery. On both setups.
func TestDeletedObjectsInIndexAndDelivery(t *testing.T) {
	for _, sys := range groupSystems {
		t.Run(sys.name, func(t *testing.T) { testDeletedObjects(t, sys.start(t)) })
	}
}

func testDeletedObjects(t *testing.T, b groupBases) {
	const user, pass = "admin", "test-password"
	mgmt := contractClient{httpClient{t, b.mgmt, user, pass}, servedDoc{"NovaDB Management", managementDoc(t)}}
	index := contractClient{httpClient{t, b.index, user, pass}, novaIndexDoc(t)}
	deliv := contractClient{httpClient{t, b.deliv, user, pass}, loadServedDoc(t, "Delivery")}

	create := func(objects ...string) write {
		body := `{"objects":[` + strings.Join(objects, ",") + `]}`
		w := decodeWrite(t, mgmt.must(http.StatusCreated, http.MethodPost, "/apis/cms/v1/branches/4/objects", body))
		if len(w.CreatedObjectIDs) != len(objects) {
			t.Fatalf("created %v", w.CreatedObjectIDs)
		}
		return w
	}
	made := create(obj(0, "delNote", v(1000, 201, "Deletable note")),
		obj(10, "delRef", v(1000, 201, "delRef"), v(1001, 0, "ObjRef")))
	typ := made.CreatedObjectIDs[0]
	doomed := create(obj(typ, "", v(1000, 201, "Doomed note"))).CreatedObjectIDs[0]
	keeper := create(obj(typ, "", v(1000, 201, "Keeper note"), fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%d}`,
		made.CreatedObjectIDs[1], doomed))).CreatedObjectIDs[0]

	del := mgmt.must(http.StatusOK, http.MethodDelete, "/apis/cms/v1/branches/4/objects", fmt.Sprintf(`{"comment":null,"objectIds":["%d"]}`, doomed))
	var deleted struct {
		DeletedObjects int `json:"deletedObjects"`
		Transaction    struct {
			ID int64 `json:"id"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal(del.body, &deleted); err != nil || deleted.DeletedObjects != 1 || deleted.Transaction.ID == 0 {
		t.Fatalf("delete answer %s: %v", del.body, err)
	}
	tx := deleted.Transaction.ID
	// Management lists it as deleted.
	var listed struct {
		Objects []struct {
			Meta struct {
				ID      int64 `json:"id"`
				Deleted bool  `json:"deleted"`
			} `json:"meta"`
		} `json:"objects"`
	}
	r := mgmt.must(http.StatusOK, http.MethodGet, "/apis/cms/v1/branches/4/types/delNote/objects?deleted=true", "")
	if err := json.Unmarshal(r.body, &listed); err != nil || len(listed.Objects) != 1 || listed.Objects[0].Meta.ID != doomed || !listed.Objects[0].Meta.Deleted {
		t.Fatalf("Management deleted=true: %s", r.body)
	}

	// Index: every value of filter.deleted, read after the delete.
	fresh := fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"PT10S"`, tx)
	filter := func(deleted string) string {
		f := fmt.Sprintf(`"objectTypeIds":[%d]`, typ)
		if deleted != "" {
			f += `,"deleted":` + deleted
		}
		return `{` + f + `}`
	}
	search := func(filter string) []indexItem {
		t.Helper()
		r := index.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objects",
			`{"filter":`+filter+`,"sortBy":[{"sortBy":1,"reverse":false}],`+fresh+`}`)
		var out struct {
			Objects []indexItem `json:"objects"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return out.Objects
	}
	count := func(filter string) int {
		t.Helper()
		r := index.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount", `{"filter":`+filter+`,`+fresh+`}`)
		var out struct {
			Count int `json:"count"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return out.Count
	}
	live, gone := indexItem{keeper, false}, indexItem{doomed, true}
	for _, c := range []struct {
		deleted string
		want    []indexItem
	}{
		{"true", []indexItem{gone}},
		{"false", []indexItem{live}},
		{"null", []indexItem{gone, live}},
		{"", []indexItem{gone, live}}, // absent: all, as null
	} {
		if got := search(filter(c.deleted)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Index search deleted=%q: %+v, want %+v", c.deleted, got, c.want)
		}
		if got := count(filter(c.deleted)); got != len(c.want) {
			t.Errorf("Index objectCount deleted=%q: %d, want %d", c.deleted, got, len(c.want))
		}
	}
	if got := search(fmt.Sprintf(`{"objectIds":[%d]}`, doomed)); !reflect.DeepEqual(got, []indexItem{gone}) {
		t.Errorf("Index search by id of the deleted object: %+v", got)
	}
	r = index.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectOccurrences",
		`{"filter":`+filter("")+`,"getDeletedOccurrences":true,`+fresh+`}`)
	var occ struct {
		Deleted struct {
			Null, NotNull int
			ValueType     string `json:"valueType"`
			Values        []struct {
				Value any `json:"value"`
				Count int `json:"count"`
			} `json:"valueOccurrences"`
		} `json:"deletedOccurrences"`
	}
	if err := json.Unmarshal(r.body, &occ); err != nil {
		t.Fatal(err)
	}
	type vc struct {
		Value any
		Count int
	}
	var values []vc
	for _, o := range occ.Deleted.Values {
		values = append(values, vc{o.Value, o.Count})
	}
	if occ.Deleted.ValueType != "boolean" || !reflect.DeepEqual(values, []vc{{false, 1}, {true, 1}}) {
		t.Errorf("deletedOccurrences: %s", r.body)
	}

	for _, c := range []struct {
		deleted string
		want    []string
	}{{"true", []string{"doomed"}}, {"false", nil}, {"", []string{"doomed"}}} {
		r = index.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/suggestions",
			`{"pattern":"doom","suggestDisplayName":true,"take":10,"filter":`+filter(c.deleted)+`,`+fresh+`}`)
		var sug struct {
			Suggestions []struct {
				Value string `json:"value"`
			} `json:"suggestions"`
		}
		if err := json.Unmarshal(r.body, &sug); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range sug.Suggestions {
			got = append(got, x.Value)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Index suggestions deleted=%q: %v, want %v", c.deleted, got, c.want)
		}
	}

	// Delivery: left out unless deleted=true.
	minVersion := []string{"X-Cms-Min-Version", fmt.Sprint(tx)}
	list := func(query string) []deliveryMeta {
		t.Helper()
		r := deliv.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/delNote/objects?take=10"+query, "", minVersion...)
		var out struct {
			Objs []deliveryMeta `json:"objs"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return out.Objs
	}
	summary := func(objs []deliveryMeta) []indexItem {
		out := []indexItem{}
		for _, o := range objs {
			out = append(out, indexItem{o.Meta.ID, o.Meta.Deleted})
		}
		return out
	}
	deliveryCount := func(query string) int {
		t.Helper()
		r := deliv.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/delNote/count"+query, "", minVersion...)
		var out struct {
			Count int `json:"count"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return out.Count
	}
	for _, c := range []struct {
		query string
		want  []indexItem
	}{
		{"", []indexItem{live}},
		{"&deleted=false", []indexItem{live}},
		{"&deleted=true", []indexItem{gone, live}},
	} {
		if got := summary(list(c.query)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Delivery list %q: %+v, want %+v", c.query, got, c.want)
		}
		if got := deliveryCount(strings.Replace(c.query, "&", "?", 1)); got != len(c.want) {
			t.Errorf("Delivery count %q: %d, want %d", c.query, got, len(c.want))
		}
	}
	byID := fmt.Sprintf("/delivery/api/branches/4/objects/%d", doomed)
	deliv.must(http.StatusNotFound, http.MethodGet, byID, "", minVersion...)
	var single struct {
		Obj  deliveryMeta   `json:"obj"`
		Refs []deliveryMeta `json:"refs"`
	}
	r = deliv.must(http.StatusOK, http.MethodGet, byID+"?deleted=true", "", minVersion...)
	if err := json.Unmarshal(r.body, &single); err != nil || single.Obj.Meta.ID != doomed || !single.Obj.Meta.Deleted {
		t.Errorf("Delivery get of the deleted object with deleted=true: %s", r.body)
	}
	// A reference to it resolves only with deleted=true.
	resolve := fmt.Sprintf("/delivery/api/branches/4/objects/%d?props=1&resolve=delRef", keeper)
	for _, c := range []struct {
		query string
		want  []indexItem
	}{{"", []indexItem{}}, {"&deleted=true", []indexItem{gone}}} {
		single.Refs = nil
		r = deliv.must(http.StatusOK, http.MethodGet, resolve+c.query, "", minVersion...)
		if err := json.Unmarshal(r.body, &single); err != nil {
			t.Fatal(err)
		}
		if got := summary(single.Refs); single.Obj.Meta.ID != keeper || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Delivery resolve%s: refs %+v, want %+v: %s", c.query, got, c.want, r.body)
		}
	}
}
