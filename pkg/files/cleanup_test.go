package files_test

import (
	"context"
	"errors"
	"image/png"
	"io"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/files"
)

// TestCleanup: unreferenced files older than the min age go with their
// thumbnails; referenced and young ones stay; a dry run removes nothing.
// (References over a real store: services/cms and services/internal/app.)
func TestCleanup(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		now := time.Now()
		svc := files.New(store, files.Options{Now: func() time.Time { return now }})
		kept := commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(2, 2, false)) }))
		dropped := commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(3, 3, false)) }))
		if _, err := svc.Thumbnail(ctx, dropped, 16); err != nil {
			t.Fatal(err)
		}
		refs := func(context.Context) (map[[16]byte]bool, error) { return map[[16]byte]bool{kept.MD5: true}, nil }
		res, err := svc.Cleanup(ctx, refs, files.CleanupOptions{MinAge: time.Hour})
		if err != nil || res.Files != 2 || res.Referenced != 1 || res.Young != 1 || res.Removed != 0 {
			t.Fatalf("within the min age: %+v, %v", res, err)
		}
		now = now.Add(2 * time.Hour)
		var progress int64
		res, err = svc.Cleanup(ctx, refs, files.CleanupOptions{MinAge: time.Hour, DryRun: true, Progress: func(d, _ int64) { progress = d }})
		if err != nil || res.Removed != 1 || progress != 2 {
			t.Fatalf("dry run: %+v, %v, progress %d", res, err, progress)
		}
		if _, err := svc.Stat(ctx, dropped); err != nil {
			t.Fatalf("dry run removed the file: %v", err)
		}
		res, err = svc.Cleanup(ctx, refs, files.CleanupOptions{MinAge: time.Hour})
		if err != nil || res.Removed != 1 || res.RemovedBytes == 0 {
			t.Fatalf("clean-up: %+v, %v", res, err)
		}
		if _, err := svc.Stat(ctx, dropped); !errors.Is(err, files.ErrNotFound) {
			t.Errorf("unreferenced file left: %v", err)
		}
		if _, err := svc.Stat(ctx, kept); err != nil {
			t.Errorf("referenced file removed: %v", err)
		}
		left := 0
		_ = store.Walk(ctx, "thumbnails/", func(blobs.Info) error { left++; return nil })
		if left != 0 {
			t.Errorf("%d thumbnails of removed files left", left)
		}
		_, err = svc.Cleanup(ctx, refs, files.CleanupOptions{MinAge: -time.Second})
		wantKind(t, "negative min age", err, errkind.Invalid)
	})
}
