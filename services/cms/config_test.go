package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/app"
)

func TestEnvKey(t *testing.T) {
	for key, want := range map[string]string{
		"httpAddr": "CMS_HTTP_ADDR", "store.engine": "CMS_STORE_ENGINE", "adminPassword": "CMS_ADMIN_PASSWORD",
		"search.prefix": "CMS_SEARCH_PREFIX", "maxUploadBytes": "CMS_MAX_UPLOAD_BYTES",
	} {
		if got := envKey(key); got != want {
			t.Errorf("envKey(%s) = %s, want %s", key, got, want)
		}
	}
}

// TestConfigPrecedence: defaults < YAML file < CMS_* env < flags.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cms.yaml")
	yaml := "httpAddr: \":7000\"\ngrpcAddr: \":7001\"\nlogLevel: debug\nstore:\n  engine: postgres\n  url: postgres://file\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CMS_GRPC_ADDR", ":7101")
	t.Setenv("CMS_ADMIN_PASSWORD", "from-env")
	t.Setenv("CMS_POSTGRES_URL", "postgres://shared")
	cmd := newRunCommand()
	if err := cmd.ParseFlags([]string{"--config", file, "--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := app.DefaultConfig()
	want.HTTPAddr, want.GRPCAddr, want.LogLevel, want.AdminPassword = ":7000", ":7101", "warn", "from-env"
	want.Store = app.Component{Engine: "postgres", URL: "postgres://file"}
	if cfg.HTTPAddr != want.HTTPAddr || cfg.GRPCAddr != want.GRPCAddr || cfg.LogLevel != want.LogLevel ||
		cfg.AdminPassword != want.AdminPassword || cfg.Store != want.Store || cfg.DataDir != want.DataDir {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
}

func TestServeTakesComponentURLsFromTheSharedEnv(t *testing.T) {
	t.Setenv("CMS_POSTGRES_URL", "postgres://pg")
	t.Setenv("CMS_NATS_URL", "nats://n")
	t.Setenv("CMS_ELASTICSEARCH_URL", "http://es")
	t.Setenv("CMS_REDIS_URL", "redis://r")
	cmd := newServeCommand()
	if err := cmd.ParseFlags([]string{"--target", "delivery"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd, app.DistributedConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Target != "delivery" || cfg.Store.URL != "postgres://pg" || cfg.Events.URL != "nats://n" ||
		cfg.Search.URL != "http://es" || cfg.Cache.URL != "redis://r" {
		t.Fatalf("%+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestREADMEDocumentsTheDefaults keeps the README honest about defaults:
// the generated table of every setting, and the defaults quoted in prose.
func TestREADMEDocumentsTheDefaults(t *testing.T) {
	b := userDocs(t)
	testREADMEListsEverySetting(t)
	d := app.DefaultConfig()
	for _, s := range []string{"`" + d.HTTPAddr + "`", "`" + d.GRPCAddr + "`", "`" + d.DataDir + "`",
		"password `" + app.DefaultAdminPassword + "`", "user `" + d.AdminUser + "`"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("README does not document %s", s)
		}
	}
	// Value sizes and parked events (docs/security.md).
	for key, def := range map[string]int{"maxValueBytes": d.MaxValueBytes, "maxRequestValueBytes": d.MaxRequestValueBytes,
		"maxIndexedChars": d.MaxIndexedChars, "indexerMaxAttempts": d.IndexerMaxAttempts,
		"indexerBatchSize": d.IndexerBatchSize} {
		row := fmt.Sprintf("| `%s` (`%s`) | %d", key, envKey(key), def)
		if !strings.Contains(string(b), row) {
			t.Errorf("README does not document %s", row)
		}
	}
}

// update rewrites generated README parts: go test ./services/cms -run TestREADMEDocumentsTheDefaults -update
var update = flag.Bool("update", false, "rewrite the README's generated settings table")

// The README's table of every setting lies between these lines.
const (
	settingsBegin = "<!-- settings: generated from app.Config by `go test ./services/cms -run TestREADMEDocumentsTheDefaults -update` -->\n"
	settingsEnd   = "<!-- end of settings -->\n"
)

// testREADMEListsEverySetting: the README's settings table is the one
// generated from app.Config (configKeys, from which defaults and
// environment bindings come too).
func testREADMEListsEverySetting(t *testing.T) {
	testenv.Generated(t, "../../README.md", settingsBegin, settingsEnd, settingsTable(), *update,
		"go test ./services/cms -run TestREADMEDocumentsTheDefaults -update")
}
