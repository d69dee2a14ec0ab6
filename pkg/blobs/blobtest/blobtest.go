// Package blobtest is the conformance suite for blobs.Store
// implementations; the file system store and the NATS object store both run
// Run and must pass all of it.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
)

// Factory returns an empty store, isolated from every other store it
// returned, and registers its cleanup.
type Factory func(t *testing.T) blobs.Store

// Run runs the suite.
func Run(t *testing.T, factory Factory) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s blobs.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"RangeReads", testRange},
		{"Stat", testStat},
		{"Overwrite", testOverwrite},
		{"DeleteIdempotent", testDelete},
		{"NotFound", testNotFound},
		{"InvalidKeys", testInvalidKeys},
		{"NestedAndCaseSensitiveKeys", testNestedKeys},
		{"FailedPutKeepsOldBlob", testFailedPut},
		{"ConcurrentPuts", testConcurrent},
		{"Walk", testWalk},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, factory(t)) })
	}
}

func randBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func put(t *testing.T, s blobs.Store, key string, data []byte, ct string) blobs.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, bytes.NewReader(data), blobs.Meta{ContentType: ct})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

// get reads the whole blob and checks it against want.
func get(t *testing.T, s blobs.Store, key string, want []byte) blobs.Info {
	t.Helper()
	rc, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q) read: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %d bytes (sha %s), want %d bytes (sha %s)", key, len(got), sum(got), len(want), sum(want))
	}
	if info.Size != int64(len(want)) || info.SHA256 != sum(want) || info.Key != key {
		t.Fatalf("Get(%q) info = %+v, want size %d sha %s", key, info, len(want), sum(want))
	}
	return info
}

// sameInfo compares what both implementations must agree on; Modified is
// only required to be close (a store may take it from its server).
func sameInfo(t *testing.T, what string, got, want blobs.Info) {
	t.Helper()
	if got.Key != want.Key || got.Size != want.Size || got.SHA256 != want.SHA256 || got.ContentType != want.ContentType {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
	if d := got.Modified.Sub(want.Modified); d > 5*time.Second || d < -5*time.Second {
		t.Errorf("%s Modified = %v, want about %v", what, got.Modified, want.Modified)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v, want %v", what, err, target)
	}
}

// failingReader returns n bytes of data and then an error.
type failingReader struct {
	r io.Reader
}

var errReader = errors.New("reader failed on purpose")

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errReader
	}
	return n, err
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
