package index

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/services/internal/gatewaytest"
)

// harness: SQLite + pkg/content writes, the outbox applied by a real
// indexwriter.Indexer on Bleve, and the Index group served over gRPC and the
// gateway on random ports.
type harness struct {
	url     string
	svc     *content.Service
	st      store.Store
	ix      *indexwriter.Indexer
	sync    func() int64
	article int64
	objs    []int64
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	iopts := indexwriter.Options{}
	ix, err := indexwriter.New(st, eng, iopts)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{svc: content.New(st, nil), st: st, ix: ix}
	h.sync = func() int64 {
		for {
			evs, err := st.ClaimOutbox(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				break
			}
			var done []int64
			for _, oe := range evs {
				ev, err := changes.Parse(oe.Payload)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ix.Apply(ctx, ev); err != nil {
					t.Fatal(err)
				}
				done = append(done, oe.ID)
			}
			if err := st.AckOutbox(ctx, done); err != nil {
				t.Fatal(err)
			}
		}
		v, err := ix.CurrentVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	g, err := New(Options{Search: eng, Layout: iopts.Layout})
	if err != nil {
		t.Fatal(err)
	}
	_, url := gatewaytest.Serve(t, g, nil)
	h.url = url + BasePath

	ch := content.Change{Caller: &auth.Principal{Name: "editor"}}
	_, typ, err := h.svc.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	h.article = typ[0]
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		_, ids, err := h.svc.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: h.article,
			Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: []byte(`"` + name + `"`)}}}})
		if err != nil {
			t.Fatal(err)
		}
		h.objs = append(h.objs, ids[0])
	}
	return h
}

func (h *harness) post(t *testing.T, want int, path, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(h.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s %s = %d, want %d: %s", path, body, resp.StatusCode, want, b)
	}
	if want >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("POST %s: error without ProblemDetails: %s", path, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("POST %s: %q: %v", path, b, err)
	}
	return m
}

func TestObjectsOverHTTP(t *testing.T) {
	h := newHarness(t)
	v := h.sync()
	typ := fmt.Sprint(h.article)

	m := h.post(t, 200, "/branches/4/objects", `{"filter":{"objectTypeIds":[`+typ+`]},"sortBy":[{"sortBy":3,"reverse":true}],"page":{"skip":0,"take":2}}`)
	objs := m["objects"].([]any)
	if len(objs) != 2 || m["more"] != true || m["changeTrackingVersion"] != float64(v) {
		t.Fatalf("search: %v", m)
	}
	first := objs[0].(map[string]any)
	if first["id"] != float64(h.objs[2]) || first["displayName"] != "Gamma" || first["typeRef"] != float64(h.article) ||
		first["hasDisplayName"] != true || first["modifiedBy"] != "editor" || first["modified"] == nil || first["deleted"] != false {
		t.Errorf("first item: %v", first)
	}

	m = h.post(t, 200, "/branches/77777/objects", `{"filter":{"searchPhrase":"alpha"}}`)
	if objs, ok := m["objects"].([]any); !ok || len(objs) != 0 || m["more"] != false {
		t.Errorf("unknown branch: %v", m)
	}
	m = h.post(t, 200, "/branches/4/objectCount", `{"filter":{"objectTypeIds":[`+typ+`],"searchPhrase":"be*"}}`)
	if m["count"] != float64(1) || m["changeTrackingVersion"] != float64(v) {
		t.Errorf("count: %v", m)
	}
	m = h.post(t, 200, "/branches/4/objectOccurrences", `{"filter":{"objectTypeIds":[`+typ+`]},"getTypeOccurrences":true,"getDeletedOccurrences":true}`)
	tocc := m["typeOccurrences"].(map[string]any)
	vals := tocc["valueOccurrences"].([]any)
	if tocc["valueType"] != "number" || tocc["notNullOccurrences"] != float64(3) || len(vals) != 1 ||
		vals[0].(map[string]any)["value"] != float64(h.article) || vals[0].(map[string]any)["count"] != float64(3) {
		t.Errorf("type occurrences: %v", m)
	}
	if docc := m["deletedOccurrences"].(map[string]any); docc["valueType"] != "boolean" ||
		docc["valueOccurrences"].([]any)[0].(map[string]any)["value"] != false {
		t.Errorf("deleted occurrences: %v", m)
	}
	m = h.post(t, 200, "/branches/4/suggestions", `{"pattern":"gam","suggestDisplayName":true}`)
	if s := m["suggestions"].([]any); len(s) != 1 || s[0].(map[string]any)["value"] != "gamma" || s[0].(map[string]any)["length"] != float64(2) {
		t.Errorf("suggestions: %v", m)
	}
	m = h.post(t, 200, "/workItemOccurrences", `{}`)
	if b := m["branchOccurrences"].(map[string]any); b["valueType"] != "number" || len(b["valueOccurrences"].([]any)) != 0 {
		t.Errorf("work items: %v", m)
	}
	m = h.post(t, 200, "/utilities/matchStrings", `{"query":"test*","strings":["test","testing","best"]}`)
	if fmt.Sprint(m["indexes"]) != "[0 1]" {
		t.Errorf("matchStrings: %v", m)
	}
}

func TestBadRequestsAreProblemDetails(t *testing.T) {
	h := newHarness(t)
	h.sync()
	for _, c := range []struct{ path, body, detail string }{
		{"/branches/4/objects", `{"filter":{"filters":[{"attrId":1000,"value":"x","compareOperator":9}]}}`, "compareOperator"},
		{"/branches/4/objects", `{"sortBy":[{"sortBy":7}]}`, "sortBy"},
		{"/branches/4/objects", `{"page":{"skip":-1}}`, "skip"},
		{"/branches/4/objectCount", `{"minChangeTrackingVersion":1,"maxWaitTime":"soon"}`, "maxWaitTime"},
		{"/branches/4/objects", `{"filter":{"filters":[{"attrId":4000,"value":"x","compareOperator":7}]}}`, "Ref"},
		{"/branches/4/suggestions", `{"pattern":"a","take":0}`, "take"},
		{"/branches/4/suggestions", `{"pattern":"a","fuzzy":true,"fuzzyMinSimilarity":1.5}`, "fuzzyMinSimilarity"},
		{"/utilities/matchStrings", `{"query":"(test","strings":["a"]}`, "query"},
		{"/utilities/matchStrings", `{"strings":["a"]}`, "query"},
		{"/branches/4/comments", `{"sort":{"field":6}}`, "sort.field"},
		{"/branches/4/comments", `{"page":{"skip":-1}}`, "skip"},
		{"/branches/4/commentCount", `{"minChangeTrackingTimestamp":"2020-01-01T00:00:00Z","maxWaitTime":"soon"}`, "maxWaitTime"},
		{"/branches/4/commentOccurrences", `{"getUserOccurrences":true,"page":{"skip":-2}}`, "skip"},
		{"/branches/4/objectXmlLinkCount", `{"objectIds":[1],"minChangeTrackingVersion":1,"maxWaitTime":"x"}`, "maxWaitTime"},
	} {
		m := h.post(t, 400, c.path, c.body)
		if d, _ := m["detail"].(string); !strings.Contains(d, c.detail) || m["status"] != float64(400) {
			t.Errorf("%s %s: problem %v, want detail mentioning %q", c.path, c.body, m, c.detail)
		}
	}
}

func TestMinChangeTrackingVersion(t *testing.T) {
	h := newHarness(t)
	v := h.sync()
	typ := fmt.Sprint(h.article)
	// Not reached within maxWaitTime: the current version answers.
	for _, wait := range []string{"00:00:00.1", "PT0.1S"} {
		m := h.post(t, 200, "/branches/4/objectCount", fmt.Sprintf(`{"filter":{"objectTypeIds":[%s]},"minChangeTrackingVersion":%d,"maxWaitTime":%q}`, typ, v+50, wait))
		if m["changeTrackingVersion"] != float64(v) || m["count"] != float64(3) {
			t.Errorf("maxWaitTime %s: %v", wait, m)
		}
	}
	// Reached while waiting: the answer includes the new object.
	got := make(chan map[string]any, 1)
	go func() {
		resp, err := http.Post(h.url+"/branches/4/objectCount", "application/json",
			strings.NewReader(fmt.Sprintf(`{"filter":{"objectTypeIds":[%s]},"minChangeTrackingVersion":%d,"maxWaitTime":"00:00:10"}`, typ, v+1)))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		got <- m
	}()
	time.Sleep(100 * time.Millisecond) // let the request start waiting
	if _, _, err := h.svc.CreateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{{TypeID: h.article}}); err != nil {
		t.Fatal(err)
	}
	v2 := h.sync()
	if m := <-got; m == nil || m["changeTrackingVersion"] != float64(v2) || m["count"] != float64(4) {
		t.Errorf("read your writes: %v, want version %d count 4", m, v2)
	}
}
