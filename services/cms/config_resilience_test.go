package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestResilienceConfig: the deadlines and the drain delay have their
// documented defaults (run: no drain delay, serve: 5 s) and are read from
// the file and CMS_TIMEOUTS_* / CMS_DRAIN_DELAY.
func TestResilienceConfig(t *testing.T) {
	run, err := loadConfig(newRunCommand(), app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if run.Timeouts != app.DefaultTimeouts() || run.DrainDelay != 0 {
		t.Fatalf("run defaults: %+v drain %v", run.Timeouts, run.DrainDelay)
	}
	serve, err := loadConfig(newServeCommand(), app.DistributedConfig())
	if err != nil {
		t.Fatal(err)
	}
	if serve.DrainDelay != app.DefaultDrainDelay {
		t.Fatalf("serve drain delay %v, want %v", serve.DrainDelay, app.DefaultDrainDelay)
	}
	file := filepath.Join(t.TempDir(), "cms.yaml")
	if err := os.WriteFile(file, []byte("timeouts:\n  store: 3s\n  cache: 50ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CMS_TIMEOUTS_SEARCH", "2s")
	t.Setenv("CMS_DRAIN_DELAY", "7s")
	cmd := newRunCommand()
	if err := cmd.ParseFlags([]string{"--config", file}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeouts.Store != 3*time.Second || cfg.Timeouts.Cache != 50*time.Millisecond ||
		cfg.Timeouts.Search != 2*time.Second || cfg.DrainDelay != 7*time.Second ||
		cfg.Timeouts.Events != app.DefaultTimeouts().Events {
		t.Fatalf("got %+v drain %v", cfg.Timeouts, cfg.DrainDelay)
	}
	t.Setenv("CMS_TIMEOUTS_CACHE", "-1s")
	if _, err := loadConfig(newRunCommand(), app.DefaultConfig()); err == nil {
		t.Fatal("a negative timeout was accepted")
	}
}

// TestREADMEDocumentsTheDeadlines keeps the README's deadline table honest.
func TestREADMEDocumentsTheDeadlines(t *testing.T) {
	b := userDocs(t)
	d := app.DefaultTimeouts()
	for key, v := range map[string]time.Duration{"timeouts.store": d.Store, "timeouts.search": d.Search,
		"timeouts.cache": d.Cache, "timeouts.events": d.Events, "timeouts.ready": d.Ready} {
		if row := "| `" + key + "` | `" + v.String() + "` |"; !strings.Contains(string(b), row) {
			t.Errorf("README lacks the row %s", row)
		}
	}
	if !strings.Contains(string(b), "`"+app.DefaultDrainDelay.String()+"` for `cms serve`") {
		t.Error("README does not document the drain delay default")
	}
}
