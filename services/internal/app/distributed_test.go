package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestServeAgainstRealComponents runs `cms serve --target=all` on
// PostgreSQL, NATS, Elasticsearch and Redis and checks that every component
// answers /readyz and that the API is served.
func TestServeAgainstRealComponents(t *testing.T) {
	cfg := DistributedConfig()
	cfg.Store.URL = testenv.URL(t, testenv.PostgresURL)
	cfg.Events.URL = testenv.URL(t, testenv.NATSURL)
	cfg.Search.URL = testenv.URL(t, testenv.ElasticsearchURL)
	cfg.Cache.URL = testenv.URL(t, testenv.RedisURL)
	prefix := fmt.Sprintf("apptest%d", time.Now().UnixNano())
	cfg.Search.Prefix, cfg.Cache.Prefix = prefix, prefix
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
	req, _ := http.NewRequest(http.MethodGet, "http://"+srv.HTTPAddr()+"/delivery/api/branches", nil)
	req.SetBasicAuth("admin", "test-password")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("GET /delivery/api/branches = %d", resp.StatusCode)
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
