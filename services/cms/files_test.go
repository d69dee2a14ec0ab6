package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/services/internal/app"
)

// TestFilesCleanupCommand: `cms files cleanup` on an embedded data dir
// keeps the file an object references, reports the unreferenced one in a
// dry run and removes it otherwise; it removes an abandoned upload once it
// is older than the configured files.uploadTtl. (The same code runs as the job
// jobCleanupFiles, tested on both setups in services/internal/app.)
func TestFilesCleanupCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := app.DefaultConfig()
	cfg.DataDir, cfg.Target = dir, app.TargetManagement
	log := slog.New(slog.DiscardHandler)
	open := func() (*app.Components, *files.Service) {
		comps, err := app.OpenComponents(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		return comps, app.NewFiles(cfg, comps, log)
	}
	comps, svc := open()
	if err := content.Bootstrap(ctx, comps.Store); err != nil {
		t.Fatal(err)
	}
	commit := func(data string) files.Name {
		ext := ".txt"
		res, err := svc.StartUpload(ctx, files.Chunk{Extension: &ext, Data: strings.NewReader(data), Commit: true})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := files.ParseName(res.GUID + ext)
		return n
	}
	kept, dropped := commit("referenced content"), commit("unreferenced content")
	ext := ".txt"
	abandoned, err := svc.StartUpload(ctx, files.Chunk{Extension: &ext, Data: strings.NewReader("never committed")})
	if err != nil {
		t.Fatal(err)
	}
	// A deleted object names kept (a deleted object can be restored).
	tx, err := comps.Store.Begin(ctx, store.TxMeta{User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tx.NewObjectIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.PutObjects(ctx, store.Object{ID: ids[0], Branch: content.BranchDefault, TypeID: content.TypeLanguage, GUID: "bpo-guid", Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if err := tx.PutValues(ctx, store.Value{ObjectID: ids[0], Branch: content.BranchDefault, AttributeID: files.AttrFileHash,
		JSON: []byte(`"` + files.GUID(kept.MD5) + `"`)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	comps.Close()

	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		root := newRootCommand()
		root.SetArgs(append([]string{"files", "cleanup", "--data-dir", dir, "--log-level", "error"}, args...))
		root.SetOut(&out)
		root.SetErr(&errOut)
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("cms files cleanup %v: %v\nstderr: %s", args, err, errOut.String())
		}
		if !strings.Contains(errOut.String(), "files [") {
			t.Errorf("progress on stderr = %q", errOut.String())
		}
		return out.String()
	}
	if out := run("--dry-run", "--min-age", "0s"); !strings.Contains(out, "2 files") || !strings.Contains(out, "would remove 1 unreferenced") {
		t.Errorf("dry run: %q", out)
	}
	if out := run(); !strings.Contains(out, "1 younger than 24h0m0s") || !strings.Contains(out, "removed 0 unreferenced") ||
		!strings.Contains(out, "0 abandoned uploads removed") {
		t.Errorf("default min age and upload TTL: %q", out)
	}
	// files.uploadTtl comes from the configuration.
	t.Setenv("CMS_FILES_UPLOAD_TTL", "1ms")
	if out := run("--min-age", "0s"); !strings.Contains(out, "1 referenced") || !strings.Contains(out, "removed 1 unreferenced") ||
		!strings.Contains(out, "1 abandoned uploads removed") {
		t.Errorf("cleanup: %q", out)
	}
	comps, svc = open()
	defer comps.Close()
	if _, err := svc.ContinueUpload(ctx, abandoned.Token, files.Chunk{Data: strings.NewReader("x"), Commit: true}); !errors.Is(err, files.ErrInvalidUpload) {
		t.Errorf("an abandoned upload after the clean-up: %v", err)
	}
	if _, err := svc.Stat(ctx, kept); err != nil {
		t.Errorf("referenced file: %v", err)
	}
	if _, err := svc.Stat(ctx, dropped); !errors.Is(err, files.ErrNotFound) {
		t.Errorf("unreferenced file after the clean-up: %v", err)
	}
}
