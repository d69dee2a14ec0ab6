package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/webhooks"
)

// TestWebhooksEmbedded: `cms run` (every target) delivers a Management
// write to a webhook defined through the API, signed with its secret.
func TestWebhooksEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.WebhookAllowPrivate = true // the receiver is on loopback
	srv := startConfigured(t, cfg)
	runWebhookScenario(t, "http://"+srv.HTTPAddr())
}

// TestWebhooksDistributed: the webhooks target on its own (`cms serve
// --target=webhooks`) beside Management, on PostgreSQL and NATS.
func TestWebhooksDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "hooks")
	mgmt := "http://" + startConfigured(t, config(TargetManagement)).HTTPAddr()
	hc := config(TargetWebhooks)
	hc.WebhookAllowPrivate = true
	startConfigured(t, hc)
	runWebhookScenario(t, mgmt)
}

func runWebhookScenario(t *testing.T, base string) {
	t.Helper()
	var mu sync.Mutex
	var got []webhooks.Payload
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhooks.Verify([]byte("hook-secret"), r.Header.Get(webhooks.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var p webhooks.Payload
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}))
	defer rcv.Close()
	admin := httpClient{t, base, "admin", "test-password"}
	admin.create(obj(210, "", v(1000, 201, "hook"), v(1220, 0, rcv.URL), v(1221, 0, "hook-secret"), v(1225, 0, true)))
	w := admin.create(obj(0, "hookedType", v(1000, 201, "Hooked type")))
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		found := slices.ContainsFunc(got, func(p webhooks.Payload) bool {
			return p.Event.Transaction == w.Transaction.ID && slices.Contains(p.Event.ObjectIDs, w.CreatedObjectIDs[0])
		})
		mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %d never delivered; got %+v", w.Transaction.ID, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
