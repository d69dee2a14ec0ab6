package fs_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/blobtest"
	"github.com/cmsplatform/cms/pkg/blobs/fs"
)

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobs.Store {
		s, err := fs.New(t.TempDir(), fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestLayout checks what only the file system store promises: nothing is
// left in tmp/, a reopened store sees the blobs, stale temp files are
// removed on open, and a torn file is reported instead of served.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.Put(ctx, "x/y", strings.NewReader("data"), blobs.Meta{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp/ holds %d files after Put", len(ents))
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "put-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("stale temp file survived reopen")
	}
	rc, info, err := s.Get(ctx, "x/y")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "data" || info.ContentType != "text/plain" {
		t.Fatalf("after reopen got %q %+v", b, info)
	}

	// Truncate the blob file: the store must refuse it, not serve garbage.
	var files []string
	_ = filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("objects/ holds %d files, want 1", len(files))
	}
	raw, _ := os.ReadFile(files[0])
	if !bytes.HasPrefix(raw, []byte("data")) {
		t.Fatalf("blob file does not start with the content")
	}
	if err := os.WriteFile(files[0], raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "x/y"); err == nil || errors.Is(err, blobs.ErrNotFound) {
		t.Fatalf("Stat of torn file = %v, want a corruption error", err)
	}
}
