package filestream

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/files"
	"google.golang.org/genproto/googleapis/api/httpbody"
)

// untouchable is a blob store that counts every call and answers none.
type untouchable struct{ calls atomic.Int64 }

func (u *untouchable) touched() error { u.calls.Add(1); return errors.New("the store was called") }

func (u *untouchable) Put(context.Context, string, io.Reader, blobs.Meta) (blobs.Info, error) {
	return blobs.Info{}, u.touched()
}

func (u *untouchable) Get(context.Context, string) (io.ReadCloser, blobs.Info, error) {
	return nil, blobs.Info{}, u.touched()
}

func (u *untouchable) GetRange(context.Context, string, int64, int64) (io.ReadCloser, blobs.Info, error) {
	return nil, blobs.Info{}, u.touched()
}
func (u *untouchable) Stat(context.Context, string) (blobs.Info, error) {
	return blobs.Info{}, u.touched()
}
func (u *untouchable) Delete(context.Context, string) error { return u.touched() }
func (u *untouchable) Walk(context.Context, string, func(blobs.Info) error) error {
	return u.touched()
}

type discard struct{}

func (discard) Send(*httpbody.HttpBody) error { return nil }

// TestInvalidNamesNeverReachTheStore: every file name the three groups'
// GET /files/{name} refuse is refused before the blob store (and so any
// file system) is touched; a valid name is looked up.
func TestInvalidNamesNeverReachTheStore(t *testing.T) {
	store := &untouchable{}
	svc := files.New(store, files.Options{})
	const h = "d41d8cd98f00b204e9800998ecf8427e"
	for _, name := range []string{"", "x.png", "../" + h, h + "/../x", "..", h + "..png", h + "\x00.png", h + ".p\\g",
		h + ".p/g", h + "\n.png", h + "." + strings.Repeat("x", 80), strings.Repeat("../", 30) + "etc/passwd", "/etc/passwd"} {
		err := ServeName(t.Context(), svc, name, discard{})
		if !errors.Is(err, files.ErrInvalidName) {
			t.Errorf("ServeName(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	if n := store.calls.Load(); n != 0 {
		t.Fatalf("invalid names reached the store %d times", n)
	}
	if err := ServeName(t.Context(), svc, h+".png", discard{}); err == nil || store.calls.Load() == 0 {
		t.Fatalf("a valid name was not looked up: %v, %d calls", err, store.calls.Load())
	}
}
