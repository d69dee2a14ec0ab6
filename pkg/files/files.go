// Package files is the domain of uploaded files: chunked uploads that
// survive restarts, content stored once under its MD5, file names
// "{guid}{ext}", byte ranges and conditional reads. It keeps everything in
// the blob component (pkg/blobs), so the embedded and the distributed
// setups behave the same:
//
//	files/{md5hex}            the content of a committed file, once per hash
//	uploads/{id}/state        an upload in progress (JSON, see uploadState)
//	uploads/{id}/{n}          its chunks, in order
//	uploadowners/{hash}       one user's open uploads (quota.go)
//
// Nothing is held in memory beyond a copy buffer: chunks stream into the
// blob store while their MD5 is computed, commit streams the chunks into the
// content blob, and reads stream ranges out of it.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/textproto"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/errkind"
)

// Defaults of Options.
const (
	DefaultMaxChunkBytes = 32 << 20
	DefaultMaxFileBytes  = 16 << 30
	DefaultUploadTTL     = 24 * time.Hour
)

// CacheControl is sent with content-addressed files, which never change.
const CacheControl = "public, max-age=31536000, immutable"

// Errors, by kind (pkg/errkind gives the HTTP status).
var (
	ErrInvalidName         = errkind.New(errkind.Invalid, "invalid file name")
	ErrInvalidUpload       = errkind.New(errkind.Invalid, "invalid upload")
	ErrNotFound            = errkind.New(errkind.NotFound, "file not found")
	ErrChunkTooLarge       = errkind.New(errkind.TooLarge, "upload chunk too large")
	ErrFileTooLarge        = errkind.New(errkind.Unprocessable, "the file size is larger than expected")
	ErrRangeNotSatisfiable = errkind.New(errkind.RangeNotSatisfiable, "range not satisfiable")
)

// Options configure a Service. Zero values take the defaults.
type Options struct {
	// MaxChunkBytes caps one upload chunk (413 beyond it).
	MaxChunkBytes int64
	// MaxFileBytes caps a whole uploaded file (422 beyond it).
	MaxFileBytes int64
	// UploadTTL is how long an upload may stay idle before ExpireUploads
	// removes it.
	UploadTTL time.Duration
	// MaxOpenUploadsPerUser and MaxOpenUploadBytesPerUser cap the open
	// (uncommitted) uploads of one user and the bytes in them (quota.go):
	// 429 beyond; negative: no cap.
	MaxOpenUploadsPerUser     int
	MaxOpenUploadBytesPerUser int64
	// Thumbnails bound thumbnail generation (thumbnails.go).
	Thumbnails ThumbnailOptions
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
}

// Service serves uploads and files from a blob store.
type Service struct {
	blobs  blobs.Store
	opts   Options
	locks  keyedMutex
	thumbs thumbnailer
}

// New returns a Service over store.
func New(store blobs.Store, opts Options) *Service {
	if opts.MaxChunkBytes <= 0 {
		opts.MaxChunkBytes = DefaultMaxChunkBytes
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = DefaultUploadTTL
	}
	if opts.MaxOpenUploadsPerUser == 0 {
		opts.MaxOpenUploadsPerUser = DefaultMaxOpenUploadsPerUser
	}
	if opts.MaxOpenUploadBytesPerUser == 0 {
		opts.MaxOpenUploadBytesPerUser = DefaultMaxOpenUploadBytesPerUser
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Thumbnails = opts.Thumbnails.withDefaults()
	return &Service{blobs: store, opts: opts, thumbs: newThumbnailer(opts.Thumbnails)}
}

// Limits returns the effective options (defaults applied).
func (s *Service) Limits() Options { return s.opts }

func contentKey(sum [16]byte) string { return "files/" + Name{MD5: sum}.Hex() }

// File describes a stored file as named by a request.
type File struct {
	Name        Name
	Size        int64
	ContentType string
	// ETag is the quoted content hash.
	ETag     string
	Modified time.Time
	// key is the blob holding the bytes (the content blob when empty; a
	// derived blob for thumbnails).
	key string
}

// blobKey is the blob holding f's bytes.
func (f File) blobKey() string {
	if f.key != "" {
		return f.key
	}
	return contentKey(f.Name.MD5)
}

// Stat looks a file up by its parsed name.
func (s *Service) Stat(ctx context.Context, n Name) (File, error) {
	info, err := s.blobs.Stat(ctx, contentKey(n.MD5))
	if errors.Is(err, blobs.ErrNotFound) {
		return File{}, fmt.Errorf("%w: %s", ErrNotFound, n)
	}
	if err != nil {
		return File{}, err
	}
	return File{Name: n, Size: info.Size, ContentType: ContentType(n.Ext), ETag: `"` + n.Hex() + `"`,
		Modified: info.Modified}, nil
}

// Exists reports whether content with the MD5 is stored.
func (s *Service) Exists(ctx context.Context, sum [16]byte) (bool, error) {
	_, err := s.Stat(ctx, Name{MD5: sum})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Response is what a read answers: the status (200 or 206), the headers
// and a body written by WriteTo.
type Response struct {
	Status       int
	ContentType  string
	ContentRange string // single range only
	Length       int64  // of the body
	file         File
	ranges       []ByteRange
	boundary     string
}

// Read plans the answer to a GET of f with the given Range header: the
// whole file (200), one range (206 with Content-Range) or several
// (206 multipart/byteranges); ErrRangeNotSatisfiable when no range fits.
func (s *Service) Read(f File, rangeHeader string) (Response, error) {
	ranges, err := ParseRange(rangeHeader, f.Size)
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: 200, ContentType: f.ContentType, Length: f.Size, file: f, ranges: ranges}
	switch len(ranges) {
	case 0:
	case 1:
		r.Status, r.ContentRange, r.Length = 206, ranges[0].ContentRange(f.Size), ranges[0].Length
	default:
		r.Status = 206
		r.boundary = boundaryFor(f)
		r.ContentType = "multipart/byteranges; boundary=" + r.boundary
		r.Length = -1
	}
	return r, nil
}

// boundaryFor is a multipart boundary that cannot occur in the part
// headers and is stable for a file (the hash makes a collision with the
// content astronomically unlikely).
func boundaryFor(f File) string { return "cms-range-" + f.Name.Hex() }

// WriteTo streams the body of r to w.
func (s *Service) WriteTo(ctx context.Context, r Response, w io.Writer) error {
	key := r.file.blobKey()
	if len(r.ranges) == 0 {
		return s.copyRange(ctx, w, key, 0, -1)
	}
	if len(r.ranges) == 1 {
		return s.copyRange(ctx, w, key, r.ranges[0].Start, r.ranges[0].Length)
	}
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(r.boundary); err != nil {
		return err
	}
	for _, br := range r.ranges {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", r.file.ContentType)
		h.Set("Content-Range", br.ContentRange(r.file.Size))
		pw, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if err := s.copyRange(ctx, pw, key, br.Start, br.Length); err != nil {
			return err
		}
	}
	return mw.Close()
}

func (s *Service) copyRange(ctx context.Context, w io.Writer, key string, off, n int64) error {
	rc, _, err := s.blobs.GetRange(ctx, key, off, n)
	if errors.Is(err, blobs.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.CopyBuffer(w, rc, make([]byte, copyBuffer))
	return err
}

// copyBuffer is the copy buffer of reads and writes.
const copyBuffer = 256 << 10

// UnsatisfiedRange is the Content-Range of a 416 answer for f.
func UnsatisfiedRange(f File) string { return "bytes */" + strconv.FormatInt(f.Size, 10) }

// HashExists is the check a write of a binary proxy object's hash needs
// (content.FileCheck): whether content with the MD5 (GUID or 32-hex form)
// is stored. A value that is no MD5 is not stored.
func (s *Service) HashExists(ctx context.Context, hash string) (bool, error) {
	sum, err := ParseMD5(hash)
	if err != nil {
		return false, nil
	}
	return s.Exists(ctx, sum)
}
