package app

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderingLogsToTheProcessLogger: an internal error of a Rendering
// operation (a binary whose stored blob cannot be read) is logged by the
// logger the process was started with, naming the group (it went to
// slog.Default()).
func TestRenderingLogsToTheProcessLogger(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	srv, logs := startLogged(t, cfg)
	c := filesClient{t: t, base: "http://" + srv.HTTPAddr()}
	r := c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, []byte("some bytes"), "Extension", "bin", "Commit", "true")
	if r.GUID == nil {
		t.Fatalf("upload: %+v", r)
	}
	path := "/apis/rendering/v1/binaries/" + *r.GUID
	c.get(path, http.StatusOK)

	// Every stored blob becomes a directory: reading it fails.
	var blobs int
	err := filepath.WalkDir(cfg.DataDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, string(filepath.Separator)+"objects"+string(filepath.Separator)) {
			return err
		}
		blobs++
		if err := os.Remove(p); err != nil {
			return err
		}
		return os.Mkdir(p, 0o700)
	})
	if err != nil || blobs == 0 {
		t.Fatalf("replacing %d blobs: %v", blobs, err)
	}
	c.get(path, http.StatusInternalServerError)
	if got := logs.String(); !strings.Contains(got, "rendering: internal error") || !strings.Contains(got, "group=rendering") {
		t.Errorf("the process log lacks Rendering's internal error:\n%s", got)
	}
}
