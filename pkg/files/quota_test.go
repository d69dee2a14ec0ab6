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

// TestLedgersPruned: the expiry of abandoned uploads also prunes the
// owners' ledgers. A user whose uploads all expired leaves no ledger; an
// entry whose upload is gone (its state removed, as a commit whose ledger
// update failed leaves it) is dropped; the entry of an open upload stays
// and still counts.
func TestLedgersPruned(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		now := time.Now()
		opts := files.Options{MaxOpenUploadsPerUser: 2, UploadTTL: time.Hour, Now: func() time.Time { return now }}
		svc := files.New(store, opts)
		as := func(name string) context.Context {
			return auth.WithPrincipal(t.Context(), auth.Principal{Name: name})
		}
		start := func(ctx context.Context) files.UploadResult {
			t.Helper()
			r, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr(".bin"), Data: bytes.NewReader([]byte("part"))})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		ledgers := func() int {
			t.Helper()
			n := 0
			if err := store.Walk(t.Context(), "uploadowners/", func(blobs.Info) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		gone, lost, active := as("gone"), as("lost"), as("active")
		start(gone)
		start(gone)
		now = now.Add(2 * time.Hour) // gone's uploads expire
		if removed, err := svc.ExpireUploads(t.Context()); err != nil || removed != 2 {
			t.Fatalf("ExpireUploads = %d, %v; want gone's 2 uploads", removed, err)
		}
		if n := ledgers(); n != 0 {
			t.Fatalf("%d ledgers after every upload expired, want none", n)
		}

		now = time.Now() // the blob store's clock: nothing expires now
		lostUpload := start(lost)
		start(active)
		// lost's upload vanished without its ledger entry going.
		if err := store.Delete(t.Context(), "uploads/"+lostUpload.Token[:32]+"/state"); err != nil {
			t.Fatal(err)
		}
		if removed, err := svc.ExpireUploads(t.Context()); err != nil || removed != 0 {
			t.Fatalf("ExpireUploads = %d, %v; want none removed", removed, err)
		}
		if n := ledgers(); n != 1 {
			t.Fatalf("%d ledgers, want 1 (active's)", n)
		}
		// active's entry still counts: one more upload reaches its cap.
		start(active)
		_, err := svc.StartUpload(active, files.Chunk{Extension: ptr(".bin"), Data: bytes.NewReader([]byte("part"))})
		wantCap(t, "active's 3rd open upload", err, files.CapOpenUploadsPerUser)
		// lost's count starts afresh.
		start(lost)
		start(lost)
	})
}
