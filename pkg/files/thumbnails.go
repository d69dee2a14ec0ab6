package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders registered for image.Decode
	"image/jpeg"
	_ "image/png" // PNG decoder for image.Decode
	"io"
	"strconv"
	"time"

	"github.com/disintegration/imaging"
	_ "golang.org/x/image/webp" // WebP decoder for image.Decode
	"golang.org/x/sync/singleflight"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/fairshare"
	"github.com/cmsplatform/cms/pkg/model"
)

// Thumbnails are derived blobs of image files, kept next to the content:
//
//	thumbnails/{md5hex}/{size}   the thumbnail of a file, at most size px
//	                             on its longer side (JPEG, or PNG when the
//	                             image has transparency)
//
// A thumbnail is generated on the first request and stored; concurrent
// requests for the same one in a process wait for one generation, and a
// stored one is never generated again (check, generate, store: another
// process generating it at the same time writes the same bytes). Images are
// never scaled up: a smaller image keeps its size. JPEG, PNG, GIF (first
// frame) and WebP are read; any other extension has no thumbnail.
//
// A reader must not be able to mint unlimited derived images nor tie the
// decoder up (Reliability II item 4):
//
//   - sizes are snapped up to the next of ThumbnailSteps (64, 128, 256,
//     512, 1024, 2048 px) below MaxSize, or MaxSize itself: at most 7
//     thumbnails exist per image whatever sizes are asked for
//     (ThumbnailSizes lists them);
//   - at most Parallel images are decoded at once in a process, and one
//     user decodes at most ParallelPerUser of them (pkg/fairshare): its
//     other requests wait for its own slot (up to the generation's time
//     limit), so another user's thumbnail starts at once;
//   - an image declaring more than MaxPixels is refused before it is
//     decoded, so decoding holds at most Parallel × MaxPixels × 8 bytes
//     (16-bit RGBA) besides the scaled copies.

// Defaults of ThumbnailOptions.
const (
	DefaultThumbnailSize     = 256
	DefaultMaxThumbnailSize  = 2048
	DefaultMaxImagePixels    = 40_000_000
	DefaultThumbnailParallel = 2
	// DefaultThumbnailParallelPerUser: one user decodes one image at a
	// time, so with the default 2 another user always finds a slot.
	DefaultThumbnailParallelPerUser = 1
	// CapThumbnailParallelPerUser names the per-user decode cap.
	CapThumbnailParallelPerUser = "files.thumbnailParallelPerUser"
	// thumbnailTimeout bounds one generation (it runs detached from the
	// request that started it, for the others waiting on it).
	thumbnailTimeout = 2 * time.Minute
	thumbnailQuality = 85
)

// Thumbnail errors, by kind.
var (
	// ErrNoThumbnail: the file is not an image (404).
	ErrNoThumbnail = errkind.New(errkind.NotFound, "no thumbnail")
	// ErrInvalidThumbnailSize: a size below 1 or above the maximum (400).
	ErrInvalidThumbnailSize = errkind.New(errkind.Invalid, "invalid thumbnail size")
	// ErrImageTooLarge: the image declares more pixels than allowed (422).
	ErrImageTooLarge = errkind.New(errkind.Unprocessable, "image too large for a thumbnail")
	// ErrUndecodableImage: the file has an image extension but is no
	// readable image of a supported format (422).
	ErrUndecodableImage = errkind.New(errkind.Unprocessable, "file is not a readable image")
)

// ThumbnailOptions bound thumbnail generation. Zero values take the defaults.
type ThumbnailOptions struct {
	// DefaultSize is the longer side when a request names no size.
	DefaultSize int
	// MaxSize caps a requested size (400 beyond it).
	MaxSize int
	// MaxPixels caps the width × height an image header may declare
	// (decompression bombs): 422 beyond it, before decoding.
	MaxPixels int64
	// Parallel is how many thumbnails a process generates at once.
	Parallel int
	// ParallelPerUser is how many of them one user generates at once.
	ParallelPerUser int
}

// ThumbnailSteps are the sizes thumbnails are made in (below MaxSize,
// which is one too): a requested size is snapped up to the next one.
var ThumbnailSteps = []int{64, 128, 256, 512, 1024, 2048}

func (o ThumbnailOptions) withDefaults() ThumbnailOptions {
	if o.DefaultSize <= 0 {
		o.DefaultSize = DefaultThumbnailSize
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxThumbnailSize
	}
	o.DefaultSize = o.snap(min(o.DefaultSize, o.MaxSize))
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxImagePixels
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultThumbnailParallel
	}
	if o.ParallelPerUser <= 0 {
		o.ParallelPerUser = DefaultThumbnailParallelPerUser
	}
	o.ParallelPerUser = min(o.ParallelPerUser, o.Parallel)
	return o
}

// sizes are the sizes thumbnails are made in: the steps below MaxSize,
// then MaxSize.
func (o ThumbnailOptions) sizes() []int {
	var out []int
	for _, s := range ThumbnailSteps {
		if s < o.MaxSize {
			out = append(out, s)
		}
	}
	return append(out, o.MaxSize)
}

// snap is the smallest size at least n (1 ≤ n ≤ MaxSize).
func (o ThumbnailOptions) snap(n int) int {
	for _, s := range o.sizes() {
		if s >= n {
			return s
		}
	}
	return o.MaxSize
}

type thumbnailer struct {
	opts   ThumbnailOptions
	flight singleflight.Group
	slots  *fairshare.Limiter
}

func newThumbnailer(o ThumbnailOptions) thumbnailer {
	return thumbnailer{opts: o, slots: fairshare.New("thumbnail decodes", fairshare.Limits{Total: o.Parallel,
		PerUser: o.ParallelPerUser, Wait: thumbnailTimeout, Cap: CapThumbnailParallelPerUser})}
}

// ThumbnailSizes are the sizes thumbnails are made in, ascending.
func (s *Service) ThumbnailSizes() []int { return s.opts.Thumbnails.sizes() }

// decodableFormats are the image.Decode format names read.
var decodableFormats = map[string]bool{"jpeg": true, "png": true, "gif": true, "webp": true}

// HasThumbnail reports whether a file with the extension has a thumbnail.
// The extensions are model.ThumbnailExtension's (Delivery's
// externalBinaryThumbnail follows the same rule).
func HasThumbnail(ext string) bool { return model.ThumbnailExtension(ext) }

// ThumbnailSize resolves a requested size: 0 is the default, 1..MaxSize
// is snapped up to the next of ThumbnailSizes, anything else is
// ErrInvalidThumbnailSize.
func (s *Service) ThumbnailSize(requested int64) (int, error) {
	o := s.opts.Thumbnails
	switch {
	case requested == 0:
		return o.DefaultSize, nil
	case requested < 0 || requested > int64(o.MaxSize):
		return 0, fmt.Errorf("%w: %d (1 to %d)", ErrInvalidThumbnailSize, requested, o.MaxSize)
	}
	return o.snap(int(requested)), nil
}

func thumbnailKey(n Name, size int) string {
	return "thumbnails/" + n.Hex() + "/" + strconv.Itoa(size)
}

// Thumbnail returns the thumbnail of the file n at most size px on its
// longer side (size snapped like ThumbnailSize's), generating and storing
// it on first use. The File it returns is read with Read and WriteTo like any
// file; its ETag names the content and the size.
func (s *Service) Thumbnail(ctx context.Context, n Name, size int) (File, error) {
	if !HasThumbnail(n.Ext) {
		return File{}, fmt.Errorf("%w for %q files", ErrNoThumbnail, n.Ext)
	}
	snapped, err := s.ThumbnailSize(int64(size))
	if err != nil || size == 0 {
		return File{}, fmt.Errorf("%w: %d", ErrInvalidThumbnailSize, size)
	}
	size = snapped
	key := thumbnailKey(n, size)
	if f, err := s.statThumbnail(ctx, n, size); !errors.Is(err, blobs.ErrNotFound) {
		return f, err
	}
	ch := s.thumbs.flight.DoChan(key, func() (any, error) {
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), thumbnailTimeout)
		defer cancel()
		return s.generateThumbnail(gctx, n, size, key)
	})
	select {
	case <-ctx.Done():
		return File{}, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return File{}, r.Err
		}
		return r.Val.(File), nil
	}
}

func (s *Service) statThumbnail(ctx context.Context, n Name, size int) (File, error) {
	key := thumbnailKey(n, size)
	info, err := s.blobs.Stat(ctx, key)
	if err != nil {
		return File{}, err
	}
	return File{Name: n, Size: info.Size, ContentType: info.ContentType, ETag: `"` + n.Hex() + "-t" + strconv.Itoa(size) + `"`,
		Modified: info.Modified, key: key}, nil
}

// generateThumbnail checks again (another caller may have stored it since),
// then decodes, scales and stores the thumbnail.
func (s *Service) generateThumbnail(ctx context.Context, n Name, size int, key string) (File, error) {
	if f, err := s.statThumbnail(ctx, n, size); !errors.Is(err, blobs.ErrNotFound) {
		return f, err
	}
	// The caller's context values (its principal) survive the detaching.
	release, err := s.thumbs.slots.Acquire(ctx, fairshare.CallerFrom(ctx))
	if errors.Is(err, fairshare.ErrBusy) {
		return File{}, &component.UnavailableError{Component: "thumbnailer", Err: err}
	}
	if err != nil {
		return File{}, err
	}
	defer release()
	src, err := s.decodeImage(ctx, n)
	if err != nil {
		return File{}, err
	}
	var buf bytes.Buffer
	contentType, err := EncodeThumbnail(&buf, src, size)
	if err != nil {
		return File{}, err
	}
	if _, err := s.blobs.Put(ctx, key, &buf, blobs.Meta{ContentType: contentType}); err != nil {
		return File{}, err
	}
	s.opts.Logger.Debug("thumbnail generated", "file", n.Hex(), "size", size)
	return s.statThumbnail(ctx, n, size)
}

// decodeImage reads the header first and refuses images beyond MaxPixels
// before decoding them.
func (s *Service) decodeImage(ctx context.Context, n Name) (image.Image, error) {
	open := func() (io.ReadCloser, error) {
		rc, _, err := s.blobs.Get(ctx, contentKey(n.MD5))
		if errors.Is(err, blobs.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, n)
		}
		return rc, err
	}
	rc, err := open()
	if err != nil {
		return nil, err
	}
	err = CheckImageHeader(rc, s.opts.Thumbnails.MaxPixels)
	rc.Close()
	if err != nil {
		return nil, err
	}
	if rc, err = open(); err != nil {
		return nil, err
	}
	defer rc.Close()
	img, _, err := image.Decode(rc)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrUndecodableImage, err)
	}
	return img, nil
}

// CheckImageHeader reads an image header from r: ErrUndecodableImage when
// it is no JPEG, PNG, GIF or WebP, ErrImageTooLarge when it declares more
// than maxPixels pixels.
func CheckImageHeader(r io.Reader, maxPixels int64) error {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil || !decodableFormats[format] {
		return fmt.Errorf("%w: %v", ErrUndecodableImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%w: %dx%d", ErrUndecodableImage, cfg.Width, cfg.Height)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxPixels {
		return fmt.Errorf("%w: %dx%d is more than %d pixels", ErrImageTooLarge, cfg.Width, cfg.Height, maxPixels)
	}
	return nil
}

// EncodeThumbnail writes src scaled to at most size px on its longer side
// (never enlarged) to w and returns the content type: image/jpeg for an
// opaque image, image/png when it has transparency.
func EncodeThumbnail(w io.Writer, src image.Image, size int) (string, error) {
	b := src.Bounds()
	dst := image.Image(src)
	if b.Dx() > size || b.Dy() > size {
		dst = imaging.Fit(src, size, size, imaging.Lanczos)
	}
	if opaque(src) {
		return "image/jpeg", jpeg.Encode(w, dst, &jpeg.Options{Quality: thumbnailQuality})
	}
	return "image/png", imaging.Encode(w, dst, imaging.PNG)
}

func opaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}
