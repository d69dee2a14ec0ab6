package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

func TestEdgeConfigFromEnv(t *testing.T) {
	t.Setenv("CMS_EDGE_MAX_BODY_BYTES", "1000")
	t.Setenv("CMS_EDGE_MAX_JSON_DEPTH", "8")
	t.Setenv("CMS_EDGE_READ_TIMEOUT", "3s")
	t.Setenv("CMS_EDGE_LOGIN_USER_FAILURES", "7")
	t.Setenv("CMS_EDGE_PASSWORD_CHECK_WAIT", "250ms")
	cmd := newRunCommand()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := app.DefaultEdgeConfig()
	want.MaxBodyBytes, want.MaxJSONDepth, want.ReadTimeout = 1000, 8, 3*time.Second
	want.LoginUserFailures, want.PasswordCheckWait = 7, 250*time.Millisecond
	if cfg.Edge != want {
		t.Fatalf("edge config\n got %+v\nwant %+v", cfg.Edge, want)
	}
	if len(cfg.CORSOrigins) != 0 {
		t.Fatalf("default CORS origins %v, want none", cfg.CORSOrigins)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.CORSOrigins = []string{"https://app.example", "null"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "null") {
		t.Fatalf("a null CORS origin validated: %v", err)
	}
}

// TestREADMEDocumentsTheEdgeSettings: every edge key has its env var and
// default in the README's table.
func TestREADMEDocumentsTheEdgeSettings(t *testing.T) {
	b := userDocs(t)
	d := app.DefaultEdgeConfig()
	defaults := map[string]string{
		"edge.maxBodyBytes": "4194304", "edge.maxJsonDepth": "64", "edge.readHeaderTimeout": d.ReadHeaderTimeout.String(),
		"edge.readTimeout": d.ReadTimeout.String(), "edge.uploadReadTimeout": d.UploadReadTimeout.String(),
		"edge.writeTimeout": d.WriteTimeout.String(), "edge.idleTimeout": d.IdleTimeout.String(),
		"edge.loginUserFailures": "5", "edge.loginAddrFailures": "20", "edge.loginBackoff": d.LoginBackoff.String(),
		"edge.loginMaxBackoff": d.LoginMaxBackoff.String(), "edge.loginTracked": "10000", "edge.passwordChecks": "0",
		"edge.passwordCheckWait": d.PasswordCheckWait.String(),
	}
	for _, k := range configKeys() {
		key := k.Key
		if !strings.HasPrefix(key, "edge.") {
			continue
		}
		row := ""
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "`"+envKey(key)+"`") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("README has no row for %s (%s)", key, envKey(key))
			continue
		}
		short := strings.NewReplacer("m0s", "m", "h0m", "h").Replace(defaults[key])
		if !strings.Contains(row, "`"+short+"`") && !strings.Contains(row, "`"+defaults[key]+"`") {
			t.Errorf("README row of %s does not show the default %s: %s", key, short, row)
		}
	}
}
