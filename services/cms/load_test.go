package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
	"github.com/cmsplatform/cms/services/internal/app"
)

// TestLoadCommand runs `cms load` for a second against the whole system
// started in-process and checks the table, the ratio lines and the exit
// status of --max-errors.
func TestLoadCommand(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "load-password"
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.Complete(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	}()
	<-srv.Ready()
	url := "http://" + srv.HTTPAddr()

	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		root := newRootCommand()
		root.SetArgs(append([]string{"load", "--url", url, "--password", "load-password", "--objects", "80",
			"--concurrency", "2", "--warmup", "0s"}, args...))
		root.SetOut(&out)
		root.SetErr(&errOut)
		err := root.ExecuteContext(ctx)
		return out.String(), errOut.String(), err
	}
	out, progress, err := run("--duration", "1500ms")
	if err != nil {
		t.Fatalf("cms load: %v\nstdout:\n%s\nstderr:\n%s", err, out, progress)
	}
	for _, op := range []string{cmsload.OpDeliveryGet, cmsload.OpDeliveryList, cmsload.OpIndexSearch, cmsload.OpManagementWrite,
		cmsload.OpBaseline, "total", "p99-ms", "ratio delivery-get latency (baseline/system)", "ratio total throughput (system/baseline)"} {
		if !strings.Contains(out, op) {
			t.Errorf("stdout lacks %q:\n%s", op, out)
		}
	}
	if strings.Contains(out, "errors, e.g.") {
		t.Errorf("requests failed:\n%s", out)
	}
	if !strings.Contains(progress, "seeded 80/80 objects") || !strings.Contains(progress, "system ") || !strings.Contains(progress, "baseline ") {
		t.Errorf("stderr (seed and progress):\n%s", progress)
	}

	// The write-visibility phase: every write answered and visible.
	out, progress, err = run("--write-rate", "20", "--duration", "1s")
	if err != nil {
		t.Fatalf("cms load --write-rate: %v\nstdout:\n%s\nstderr:\n%s", err, out, progress)
	}
	for _, want := range []string{"write visibility: 20 writes/s", cmsload.OpWrite, cmsload.OpWriteVisible, "p99-ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("--write-rate stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "errors, e.g.") || strings.Contains(out, cmsload.OpDeliveryGet) {
		t.Errorf("--write-rate: errors or the mix ran:\n%s", out)
	}

	// Any error rate is above -1 %: the status must say so.
	if _, _, err := run("--requests", "20", "--max-errors", "-1", "--mix", "delivery-get=1"); !errors.Is(err, errTooManyErrors) {
		t.Errorf("--max-errors -1: err = %v, want errTooManyErrors", err)
	}
	if _, _, err := run("--mix", "delivery-get=1,bogus=2"); !errors.Is(err, cmsload.ErrMix) {
		t.Errorf("bad --mix: err = %v", err)
	}
	if _, _, err := run("--password", "wrong", "--requests", "1"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: err = %v, want the seed's 401", err)
	}
}
