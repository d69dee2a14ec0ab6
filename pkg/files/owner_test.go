package files_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/files"
)

// TestUploadTokenBoundToItsStarter: an upload token works only for the
// user who started the upload (administrators included); to anyone else it
// is an unknown token, for a chunk, a commit and a cancel alike, and the
// upload is untouched.
func TestUploadTokenBoundToItsStarter(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		svc := files.New(store, files.Options{})
		as := func(name string, admin bool) context.Context {
			return auth.WithPrincipal(t.Context(), auth.Principal{Name: name, Admin: admin})
		}
		alice := as("alice", false)
		r, err := svc.StartUpload(alice, files.Chunk{Extension: ptr("txt"), Data: bytes.NewReader([]byte("abc"))})
		if err != nil || r.Token == "" {
			t.Fatalf("start: %+v %v", r, err)
		}
		token := r.Token
		for _, other := range []context.Context{as("mallory", false), as("admin", true)} {
			if _, err := svc.ContinueUpload(other, token, files.Chunk{Data: bytes.NewReader([]byte("evil")), Commit: true}); !errors.Is(err, files.ErrInvalidUpload) {
				t.Errorf("another user commits: %v, want ErrInvalidUpload", err)
			}
			if err := svc.CancelUpload(other, token); !errors.Is(err, files.ErrInvalidUpload) {
				t.Errorf("another user cancels: %v, want ErrInvalidUpload", err)
			}
		}
		r, err = svc.ContinueUpload(alice, token, files.Chunk{Data: bytes.NewReader([]byte("d")), Commit: true})
		if err != nil || r.Size != 4 || r.GUID == "" {
			t.Fatalf("the starter commits after the others tried: %+v %v, want 4 bytes committed", r, err)
		}
	})
}
