package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestServeAgainstRealComponents runs `cms serve --target=all` on
// PostgreSQL, NATS, Elasticsearch and Redis and checks that every component
// answers /readyz and that the API is served.
func TestServeAgainstRealComponents(t *testing.T) {
	// After the graceful shutdown nothing of the process runs on: its
	// clients of PostgreSQL, NATS, Elasticsearch and Redis are closed.
	testenv.CheckGoroutines(t)
	cfg := DistributedConfig()
	cfg.DrainDelay = 0 // nothing balances load in front of a test
	// Its own database, change stream, indexes and cache keys: other test
	// runs on the same components cannot feed or steal its events.
	prefix := fmt.Sprintf("apptest%d", time.Now().UnixNano())
	cfg.Store.URL = testenv.PostgresDatabase(t)
	cfg.Events.URL, _ = sharedNATS(t, prefix)
	cfg.Search.URL = testenv.URL(t, testenv.ElasticsearchURL)
	cfg.Cache.URL = testenv.URL(t, testenv.RedisURL)
	cleanupElasticsearch(t, cfg.Search.URL, prefix)
	cleanupRedis(t, cfg.Cache.URL, prefix)
	cfg.Search.Prefix, cfg.Cache.Prefix, cfg.Events.Prefix, cfg.Blobs.Prefix = prefix, prefix, prefix, prefix
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	}
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz = %d: %s", resp.StatusCode, body)
	}
	// While the indexer creates the index, Elasticsearch may answer "all
	// shards failed": Delivery says 503 with Retry-After, never 500.
	if r := (httpClient{t, "http://" + srv.HTTPAddr(), "admin", "test-password"}).doUntilAvailable(15*time.Second,
		http.MethodGet, "/delivery/api/branches", ""); r.code != http.StatusOK {
		t.Fatalf("GET /delivery/api/branches = %d: %s", r.code, r.body)
	}
	// The whole distributed pipeline: PostgreSQL outbox → NATS → indexer →
	// Elasticsearch → Index API.
	assertWriteFoundByIndex(t, "http://"+srv.HTTPAddr(), prefix)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no graceful shutdown within 20s")
	}
}

// TestServeManagementOnPostgres runs `cms serve --target=management` on
// PostgreSQL and NATS and walks the README's flow: a type and an attribute,
// a child branch, a localized object there, a projected read, 304, the
// parent not seeing it, update, delete, and 400/401/404 on the way.
func TestServeManagementOnPostgres(t *testing.T) {
	cfg := DistributedConfig()
	cfg.DrainDelay = 0 // nothing balances load in front of a test
	cfg.Target = TargetManagement
	prefix := fmt.Sprintf("mgmttest%d", time.Now().UnixNano())
	cfg.Store.URL = testenv.PostgresDatabase(t)
	cfg.Events.URL, _ = sharedNATS(t, prefix)
	cfg.Events.Prefix, cfg.Blobs.Prefix = prefix, prefix
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	api := "http://" + srv.HTTPAddr() + "/apis/cms/v1"
	call := func(method, path, body string, hdr ...string) (int, http.Header, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, api+path, strings.NewReader(body))
		req.SetBasicAuth("admin", "test-password")
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, resp.Header, m
	}
	id := func(m map[string]any, i int) string {
		return fmt.Sprint(int64(m["createdObjectIds"].([]any)[i].(float64)))
	}
	suffix := fmt.Sprint(time.Now().UnixNano())
	code, _, m := call("POST", "/branches/4/objects", `{"objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"article`+suffix+`"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Article"}]},
		{"meta":{"typeRef":10,"apiIdentifier":"title`+suffix+`"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"String"},
		 {"attribute":1017,"language":0,"variant":0,"value":true}]}]}`)
	if code != 201 {
		t.Fatalf("model: %d %v", code, m)
	}
	typ, title := id(m, 0), id(m, 1)
	code, _, m = call("POST", "/branches", `{"values":[{"attribute":1000,"language":201,"variant":0,"value":"Child"},
		{"attribute":4000,"language":0,"variant":0,"value":4}]}`)
	if code != 200 {
		t.Fatalf("branch: %d %v", code, m)
	}
	branch := fmt.Sprint(int64(m["meta"].(map[string]any)["id"].(float64)))
	code, _, m = call("POST", "/branches/"+branch+"/objects", `{"objects":[{"meta":{"typeRef":`+typ+`,"apiIdentifier":"home`+suffix+`"},"values":[
		{"attribute":`+title+`,"language":201,"variant":0,"value":"Hello"},{"attribute":`+title+`,"language":202,"variant":0,"value":"Hallo"}]}]}`)
	if code != 201 {
		t.Fatalf("object: %d %v", code, m)
	}
	obj := id(m, 0)
	path := "/branches/" + branch + "/objects/home" + suffix + "?attributes=" + title + "&languages=202"
	code, hdr, m := call("GET", path, "")
	values, _ := m["values"].([]any)
	if code != 200 || len(values) != 1 || values[0].(map[string]any)["value"] != "Hallo" {
		t.Fatalf("projected read: %d %v", code, m)
	}
	if code, _, _ = call("GET", path, "", "If-None-Match", hdr.Get("ETag")); code != 304 {
		t.Fatalf("If-None-Match: %d", code)
	}
	if code, _, _ = call("GET", "/branches/4/objects/"+obj, ""); code != 404 {
		t.Fatalf("parent sees the child's object: %d", code)
	}
	if code, _, m = call("PATCH", "/branches/"+branch+"/objects", `{"objects":[{"meta":{"id":`+obj+`,"typeRef":`+typ+`},"values":[
		{"attribute":`+title+`,"language":202,"variant":0,"value":"Servus"}]}]}`); code != 200 {
		t.Fatalf("update: %d %v", code, m)
	}
	if code, _, m = call("POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":10},"values":[{"attribute":1001,"language":0,"variant":0,"value":5}]}]}`); code != 400 {
		t.Fatalf("invalid value: %d %v", code, m)
	}
	if code, _, m = call("DELETE", "/branches/"+branch+"/objects", `{"objectIds":["`+obj+`"]}`); code != 200 {
		t.Fatalf("delete: %d %v", code, m)
	}
	req, _ := http.NewRequest("GET", api+"/branches/4", nil)
	req.SetBasicAuth("admin", "wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
