// Package blobs stores binary content (uploaded files, rendered binaries)
// under slash-separated keys.
//
// Store is the one interface; fs keeps blobs on the local file system
// (embedded mode) and natsobj in a NATS JetStream object store (distributed
// mode, or embedded on the in-process NATS server). blobtest is the
// conformance suite both pass. Keys are checked by ValidateKey, shared by all
// implementations, so no key can escape a root directory or differ in
// meaning between backends.
package blobs

import (
	"context"
	"errors"
	"io"
	"time"
)

// Sentinel errors. Implementations wrap them with %w.
var (
	// ErrNotFound: no blob under the key.
	ErrNotFound = errors.New("blobs: not found")
	// ErrInvalidKey: the key fails ValidateKey.
	ErrInvalidKey = errors.New("blobs: invalid key")
	// ErrInvalidRange: a range starts beyond the end of the blob or has a
	// negative offset (HTTP 416).
	ErrInvalidRange = errors.New("blobs: invalid range")
)

// Meta is what the caller supplies with a blob.
type Meta struct {
	// ContentType is stored and returned as given; empty is allowed.
	ContentType string
}

// Info describes a stored blob.
type Info struct {
	Key         string
	Size        int64
	SHA256      string // lower-case hex of the content's SHA-256
	ContentType string
	Modified    time.Time // when the blob was last written
}

// Store holds blobs. All methods are safe for concurrent use.
type Store interface {
	// Put stores the content of r under key, replacing any blob there. It is
	// atomic: readers see the old blob or the new one, never a mix, and if
	// reading r fails or ctx ends the old blob (or none) remains.
	Put(ctx context.Context, key string, r io.Reader, meta Meta) (Info, error)
	// Get opens the blob. The caller must close the reader. The content
	// read is the version described by the returned Info even if the blob is
	// replaced while reading.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// GetRange opens length bytes starting at offset. A negative length, or
	// one reaching past the end, reads to the end. An offset beyond the size
	// or negative gives ErrInvalidRange; offset == size gives an empty reader.
	// Info describes the whole blob.
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, Info, error)
	// Stat describes the blob without opening it.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the blob. Deleting a missing blob is not an error.
	Delete(ctx context.Context, key string) error
	// Walk calls fn with the Info of every blob whose key starts with
	// prefix, in no particular order, and stops at the first error fn
	// returns (which Walk returns). It is meant for maintenance (expiring
	// temporary uploads, clean-ups), not for serving requests: on the file
	// system it reads the metadata of every blob in the store.
	Walk(ctx context.Context, prefix string, fn func(Info) error) error
}

// RangeLen returns how many bytes GetRange(offset, length) reads from a blob
// of the given size, or ErrInvalidRange. Implementations share it so that
// the range rules are the same everywhere.
func RangeLen(size, offset, length int64) (int64, error) {
	if offset < 0 || offset > size {
		return 0, ErrInvalidRange
	}
	if length < 0 || length > size-offset {
		return size - offset, nil
	}
	return length, nil
}

// ReadCloser combines a reader with the closer that releases it.
type ReadCloser struct {
	io.Reader
	io.Closer
}
