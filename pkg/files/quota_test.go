package files_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/fairshare"
	"github.com/cmsplatform/cms/pkg/files"
)

func wantCap(t *testing.T, what string, err error, capName string) {
	t.Helper()
	var le *fairshare.LimitError
	if !errors.As(err, &le) || !errors.Is(err, errkind.TooMany) || le.Cap != capName || le.RetryAfter() <= 0 {
		t.Fatalf("%s: %v, want a LimitError naming %s", what, err, capName)
	}
}

// One user's open uploads are capped by count and by bytes (Reliability
// II item 5), the count holds across a restart (a new Service over the
// same store), other users and administrators are not affected, and a
// committed or cancelled upload no longer counts.
func TestOpenUploadCaps(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		opts := files.Options{MaxOpenUploadsPerUser: 3, MaxOpenUploadBytesPerUser: 100, Now: func() time.Time { return now }}
		svc := files.New(store, opts)
		as := func(name string, admin bool) context.Context {
			return auth.WithPrincipal(t.Context(), auth.Principal{Name: name, Admin: admin})
		}
		greedy := as("greedy", false)
		start := func(svc *files.Service, ctx context.Context, n int) (files.UploadResult, error) {
			return svc.StartUpload(ctx, files.Chunk{Extension: ptr(".bin"), Data: bytes.NewReader(make([]byte, n))})
		}
		var tokens []string
		for range 3 {
			r, err := start(svc, greedy, 10)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, r.Token)
		}
		_, err := start(svc, greedy, 10)
		wantCap(t, "4th open upload", err, files.CapOpenUploadsPerUser)
		// The count is durable: a restarted process refuses too.
		restarted := files.New(store, opts)
		_, err = start(restarted, greedy, 10)
		wantCap(t, "4th open upload after a restart", err, files.CapOpenUploadsPerUser)
		// Others are not affected.
		if _, err := start(restarted, as("other", false), 10); err != nil {
			t.Fatalf("another user: %v", err)
		}
		for range 5 {
			if _, err := start(restarted, as("root", true), 200); err != nil {
				t.Fatalf("an administrator: %v", err)
			}
		}
		// Bytes: 30 are open; 70 more fit, 71 do not.
		_, err = restarted.ContinueUpload(greedy, tokens[0], files.Chunk{Data: bytes.NewReader(make([]byte, 71))})
		wantCap(t, "bytes beyond the cap", err, files.CapOpenUploadBytesPerUser)
		if r, err := restarted.ContinueUpload(greedy, tokens[0], files.Chunk{Data: bytes.NewReader(make([]byte, 70))}); err != nil || r.Size != 80 {
			t.Fatalf("bytes up to the cap: %+v, %v", r, err)
		}
		_, err = restarted.ContinueUpload(greedy, tokens[1], files.Chunk{Data: bytes.NewReader([]byte{1})})
		wantCap(t, "one byte more", err, files.CapOpenUploadBytesPerUser)
		// A commit and a cancel free their share.
		if _, err := restarted.ContinueUpload(greedy, tokens[0], files.Chunk{Data: bytes.NewReader(nil), Commit: true}); err != nil {
			t.Fatal(err)
		}
		if err := restarted.CancelUpload(greedy, tokens[1]); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := start(restarted, greedy, 40); err != nil {
				t.Fatalf("after a commit and a cancel: %v", err)
			}
		}
		_, err = start(restarted, greedy, 1)
		wantCap(t, "full again", err, files.CapOpenUploadsPerUser)
		// Expired uploads no longer count.
		now = now.Add(files.DefaultUploadTTL + time.Minute)
		if _, err := start(restarted, greedy, 10); err != nil {
			t.Fatalf("after the uploads expired: %v", err)
		}
	})
}
