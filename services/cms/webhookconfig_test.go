package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/webhooks"
	"github.com/cmsplatform/cms/services/internal/app"
)

// TestWebhookMaxLanes: CMS_WEBHOOK_MAX_LANES sets the bound of delivery
// lanes, at least 1, and README "Security and limits" gives its default.
func TestWebhookMaxLanes(t *testing.T) {
	if d := app.DefaultConfig().WebhookMaxLanes; d != webhooks.DefaultMaxLanes {
		t.Fatalf("default webhookMaxLanes %d, want %d", d, webhooks.DefaultMaxLanes)
	}
	t.Setenv("CMS_ADMIN_PASSWORD", "pw")
	t.Setenv("CMS_WEBHOOK_MAX_LANES", "7")
	cmd := newRunCommand()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WebhookMaxLanes != 7 {
		t.Fatalf("webhookMaxLanes %d from CMS_WEBHOOK_MAX_LANES=7", cfg.WebhookMaxLanes)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.WebhookMaxLanes = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "webhookMaxLanes") {
		t.Fatalf("webhookMaxLanes 0 validated: %v", err)
	}
	b := userDocs(t)
	if row := fmt.Sprintf("| %d, one delivery in flight each |", webhooks.DefaultMaxLanes); !strings.Contains(string(b), row) {
		t.Errorf("README does not document %s", row)
	}
}
