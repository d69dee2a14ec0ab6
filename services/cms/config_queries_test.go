package main

import (
	"testing"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestQueriesConfig: the query queue and the access log have their
// documented defaults and are read from CMS_QUERIES_* and CMS_ACCESS_LOG;
// a negative queue wait is refused.
func TestQueriesConfig(t *testing.T) {
	run, err := loadConfig(newRunCommand(), app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if run.Queries != app.DefaultQueryLimits() || run.AccessLog ||
		run.Queries.QueueWait != time.Second || run.Queries.ShedLogInterval != 10*time.Second || run.Queries.Queue != 4096 {
		t.Fatalf("run defaults: %+v access log %v", run.Queries, run.AccessLog)
	}
	t.Setenv("CMS_QUERIES_QUEUE_WAIT", "250ms")
	t.Setenv("CMS_QUERIES_SHED_LOG_INTERVAL", "1m")
	t.Setenv("CMS_QUERIES_QUEUE", "100")
	t.Setenv("CMS_ACCESS_LOG", "true")
	cfg, err := loadConfig(newRunCommand(), app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Queries.QueueWait != 250*time.Millisecond || cfg.Queries.ShedLogInterval != time.Minute ||
		cfg.Queries.Queue != 100 || !cfg.AccessLog {
		t.Fatalf("got %+v access log %v", cfg.Queries, cfg.AccessLog)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Queries.QueueWait = -time.Second
	if cfg.Validate() == nil {
		t.Fatal("a negative queue wait was accepted")
	}
}
