package files_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/files"
)

// countingStore is a real store that counts the thumbnails written.
type countingStore struct {
	blobs.Store
	thumbnailPuts atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, key string, r io.Reader, meta blobs.Meta) (blobs.Info, error) {
	if strings.HasPrefix(key, "thumbnails/") {
		s.thumbnailPuts.Add(1)
	}
	return s.Store.Put(ctx, key, r, meta)
}

func testImage(w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha && x < w/2 {
				a = 0
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 128, a})
		}
	}
	return img
}

func encoded(t *testing.T, enc func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bombPNG is a valid 1×1 PNG whose header is rewritten to declare w×h.
func bombPNG(t *testing.T, w, h uint32) []byte {
	b := encoded(t, func(o io.Writer) error { return png.Encode(o, testImage(1, 1, false)) })
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

func commit(t *testing.T, svc *files.Service, ext string, data []byte) files.Name {
	t.Helper()
	res, err := svc.StartUpload(t.Context(), files.Chunk{Extension: ptr(ext), Data: bytes.NewReader(data), Commit: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := files.ParseName(res.GUID + ext)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestThumbnails(t *testing.T) {
	webp, err := os.ReadFile("testdata/photo.webp")
	if err != nil {
		t.Fatal(err)
	}
	alphaWebp, err := os.ReadFile("testdata/alpha.webp")
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		counting := &countingStore{Store: store}
		svc := files.New(counting, files.Options{Thumbnails: files.ThumbnailOptions{MaxPixels: 10_000_000}})
		opaque := testImage(600, 400, false)
		cases := []struct {
			ext, wantType string
			data          []byte
		}{
			{".jpg", "image/jpeg", encoded(t, func(w io.Writer) error { return jpeg.Encode(w, opaque, nil) })},
			{".png", "image/jpeg", encoded(t, func(w io.Writer) error { return png.Encode(w, opaque) })},
			{".PNG", "image/png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(600, 400, true)) })},
			{".gif", "image/jpeg", encoded(t, func(w io.Writer) error { return gif.Encode(w, opaque, nil) })},
			{".webp", "image/jpeg", webp},
			{".webp", "image/png", alphaWebp},
		}
		for _, c := range cases {
			n := commit(t, svc, c.ext, c.data)
			f, err := svc.Thumbnail(ctx, n, 100)
			if err != nil {
				t.Fatalf("%s: %v", c.ext, err)
			}
			// 100 is snapped up to 128 (ThumbnailSteps).
			if f.ContentType != c.wantType || f.ETag != `"`+n.Hex()+`-t128"` {
				t.Errorf("%s: %+v, want %s", c.ext, f, c.wantType)
			}
			got, format, err := image.Decode(bytes.NewReader(read(t, svc, f, "")))
			if err != nil || "image/"+format != c.wantType {
				t.Fatalf("%s: thumbnail decodes as %q: %v", c.ext, format, err)
			}
			src, _, _ := image.DecodeConfig(bytes.NewReader(c.data))
			if b, want := got.Bounds(), min(128, max(src.Width, src.Height)); max(b.Dx(), b.Dy()) != want {
				t.Errorf("%s: thumbnail is %v, want %d px on the longer side", c.ext, b, want)
			}
		}
		if n := counting.thumbnailPuts.Load(); n != int64(len(cases)) {
			t.Errorf("%d thumbnails stored, want %d", n, len(cases))
		}

		// Never enlarged; the default size; invalid sizes.
		small := commit(t, svc, ".png", encoded(t, func(w io.Writer) error { return png.Encode(w, testImage(40, 30, false)) }))
		size, err := svc.ThumbnailSize(0)
		if err != nil || size != files.DefaultThumbnailSize {
			t.Fatalf("default size = %d, %v", size, err)
		}
		f, err := svc.Thumbnail(ctx, small, size)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(read(t, svc, f, ""))); err != nil || cfg.Width != 40 || cfg.Height != 30 {
			t.Errorf("small image thumbnail %+v, %v", cfg, err)
		}
		for _, bad := range []int64{-1, files.DefaultMaxThumbnailSize + 1, 1 << 40} {
			_, err := svc.ThumbnailSize(bad)
			wantKind(t, "size", err, errkind.Invalid)
		}

		// Concurrent requests for a new thumbnail generate it once.
		before := counting.thumbnailPuts.Load()
		var wg sync.WaitGroup
		etags := make([]string, 8)
		for i := range etags {
			wg.Go(func() {
				f, err := svc.Thumbnail(ctx, small, 20)
				if err != nil {
					t.Error(err)
				}
				etags[i] = f.ETag
			})
		}
		wg.Wait()
		if n := counting.thumbnailPuts.Load() - before; n != 1 {
			t.Errorf("8 concurrent requests stored %d thumbnails, want 1", n)
		}
		// A new process finds the stored one.
		again := files.New(counting, files.Options{})
		if f, err := again.Thumbnail(ctx, small, 20); err != nil || f.ETag != etags[0] || counting.thumbnailPuts.Load()-before != 1 {
			t.Errorf("stored thumbnail not reused: %+v, %v", f, err)
		}

		// A decompression bomb is refused before decoding; a file that is
		// no image has no thumbnail; a broken image is unprocessable.
		bomb := commit(t, svc, ".png", bombPNG(t, 100_000, 100_000))
		_, err = svc.Thumbnail(ctx, bomb, 100)
		wantKind(t, "bomb", err, errkind.Unprocessable)
		pdf := commit(t, svc, ".pdf", []byte("%PDF-1.4 not an image"))
		_, err = svc.Thumbnail(ctx, pdf, 100)
		wantKind(t, "pdf", err, errkind.NotFound)
		broken := commit(t, svc, ".jpg", []byte("not a jpeg at all"))
		_, err = svc.Thumbnail(ctx, broken, 100)
		wantKind(t, "broken jpeg", err, errkind.Unprocessable)
		missing, _ := files.ParseName(strings.Repeat("0", 32) + ".png")
		_, err = svc.Thumbnail(ctx, missing, 100)
		wantKind(t, "missing file", err, errkind.NotFound)
	})
}
