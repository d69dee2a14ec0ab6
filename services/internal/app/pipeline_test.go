package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
)

// TestWriteIsIndexed follows one write through the whole embedded system:
// Management REST → store + outbox → relay → JetStream → indexer → Bleve.
func TestWriteIsIndexed(t *testing.T) {
	srv := startServer(t)
	admin := httpClient{t, "http://" + srv.HTTPAddr(), "admin", "test-password"}
	start := time.Now()
	created := admin.create(obj(0, "pipelineType", v(1000, 201, "Pipeline type")))
	ix, err := indexwriter.New(srv.comps.Store, srv.comps.Search, srv.cfg.indexing(srv.log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ix.WaitForVersion(ctx, created.Transaction.ID, 5*time.Second); err != nil {
		t.Fatalf("transaction %d not indexed within 5s: %v", created.Transaction.ID, err)
	}
	t.Logf("write → searchable in %v", time.Since(start))
	doc, err := srv.comps.Search.Get(ctx, indexdoc.ObjectsIndex, indexdoc.DocID(4, created.CreatedObjectIDs[0]))
	if err != nil {
		t.Fatalf("indexed document: %v", err)
	}
	if doc.Version != created.Transaction.ID {
		t.Fatalf("document version %d, want the transaction id %d", doc.Version, created.Transaction.ID)
	}
}

// TestWriteIsFoundByTheIndexAPI: a Management write is found through the
// Index group, read-your-writes through minChangeTrackingVersion.
func TestWriteIsFoundByTheIndexAPI(t *testing.T) {
	srv := startServer(t)
	assertWriteFoundByIndex(t, "http://"+srv.HTTPAddr(), "findMe")
}

// assertWriteFoundByIndex creates a type object through Management and
// finds it through the Index group with minChangeTrackingVersion.
func assertWriteFoundByIndex(t *testing.T, base, apiID string) {
	t.Helper()
	call := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.SetBasicAuth("admin", "test-password")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, raw := call(http.MethodPost, "/apis/cms/v1/branches/4/objects", `{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"`+apiID+`"},`+
		`"values":[{"attribute":1000,"language":201,"variant":0,"value":"Zebra `+apiID+`"}]}]}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, raw)
	}
	var created struct {
		Transaction struct {
			ID int64 `json:"id"`
		} `json:"transaction"`
		CreatedObjectIDs []int64 `json:"createdObjectIds"`
	}
	if err := json.Unmarshal(raw, &created); err != nil {
		t.Fatal(err)
	}
	code, raw = call(http.MethodPost, "/apis/index/v1/branches/4/objects",
		`{"filter":{"searchPhrase":"zebra `+apiID+`"},"minChangeTrackingVersion":`+strconv.FormatInt(created.Transaction.ID, 10)+`,"maxWaitTime":"00:00:05"}`)
	if code != http.StatusOK {
		t.Fatalf("search: %d %s", code, raw)
	}
	var res struct {
		ChangeTrackingVersion int64 `json:"changeTrackingVersion"`
		Objects               []struct {
			ID int64 `json:"id"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if res.ChangeTrackingVersion < created.Transaction.ID || len(res.Objects) != 1 || res.Objects[0].ID != created.CreatedObjectIDs[0] {
		t.Fatalf("search after write %d: %s", created.Transaction.ID, raw)
	}
}

// TestPasswordsNeverReachTheIndex creates a user with a password and checks
// that neither the password nor its hash is in any field of its document.
func TestPasswordsNeverReachTheIndex(t *testing.T) {
	srv := startServer(t)
	admin := httpClient{t, "http://" + srv.HTTPAddr(), "admin", "test-password"}
	created := admin.create(obj(110, "", v(1100, 0, "carol"), v(1101, 0, "s3cret-Pa55")))
	ix, err := indexwriter.New(srv.comps.Store, srv.comps.Search, srv.cfg.indexing(srv.log))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ix.WaitForVersion(ctx, created.Transaction.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	doc, err := srv.comps.Search.Get(ctx, indexdoc.ObjectsIndex, indexdoc.DocID(4, created.CreatedObjectIDs[0]))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(doc.Fields)
	if !strings.Contains(string(all), "carol") {
		t.Fatalf("the user document lacks its name: %s", all)
	}
	if strings.Contains(string(all), "s3cret") || strings.Contains(string(all), "$2a$") || strings.Contains(string(all), "1101") {
		t.Fatalf("a password or its hash reached the index: %s", all)
	}
}

// TestWriteIsPublishedByDelivery: a type, an attribute and an object
// written through Management appear in Delivery with props keyed by the
// attribute's ApiIdentifier, in the requested language.
func TestWriteIsPublishedByDelivery(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	call := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.SetBasicAuth("admin", "test-password")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	var created struct {
		Transaction struct {
			ID int64 `json:"id"`
		} `json:"transaction"`
		CreatedObjectIDs []int64 `json:"createdObjectIds"`
	}
	create := func(body string) {
		t.Helper()
		code, raw := call(http.MethodPost, "/apis/cms/v1/branches/4/objects", body)
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, raw)
		}
		if err := json.Unmarshal(raw, &created); err != nil {
			t.Fatal(err)
		}
	}
	create(`{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"article"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Article"}]},` +
		`{"meta":{"typeRef":10,"apiIdentifier":"headline"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"String"},` +
		`{"attribute":1017,"language":0,"variant":0,"value":true}]}]}`)
	typ, attr := created.CreatedObjectIDs[0], created.CreatedObjectIDs[1]
	create(`{"objects":[{"meta":{"typeRef":` + strconv.FormatInt(typ, 10) + `,"apiIdentifier":"welcome"},"values":[` +
		`{"attribute":1000,"language":201,"variant":0,"value":"Welcome"},` +
		`{"attribute":` + strconv.FormatInt(attr, 10) + `,"language":201,"variant":0,"value":"Hello"},` +
		`{"attribute":` + strconv.FormatInt(attr, 10) + `,"language":202,"variant":0,"value":"Hallo"}]}]}`)
	// Read-your-writes over HTTP: Delivery waits until the write is indexed.
	req, _ := http.NewRequest(http.MethodGet, base+"/delivery/api/branches/4/objects/welcome?lang=de-DE&props=1", nil)
	req.SetBasicAuth("admin", "test-password")
	req.Header.Set("X-Cms-Min-Version", strconv.FormatInt(created.Transaction.ID, 10))
	req.Header.Set("X-Cms-Max-Wait", "5s")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	code := resp.StatusCode
	if code != http.StatusOK {
		t.Fatalf("delivery get: %d %s", code, raw)
	}
	var got struct {
		Obj struct {
			DisplayName string         `json:"displayName"`
			Meta        map[string]any `json:"meta"`
			Props       map[string]any `json:"props"`
		} `json:"obj"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if got.Obj.Props["headline"] != "Hallo" || got.Obj.Meta["type"] != "article" || got.Obj.Meta["apiIdentifier"] != "welcome" {
		t.Fatalf("delivery object: %s", raw)
	}
}
