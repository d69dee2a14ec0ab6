package files_test

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/files"
)

// FuzzParseName: a name either fails as invalid or parses to a canonical
// name that parses to itself and holds no path syntax.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"d41d8cd9-8f00-b204-e980-0998ecf8427e.png", "d41d8cd98f00b204e9800998ecf8427e", "../x", "a\x00b",
		"d41d8cd98f00b204e9800998ecf8427e.tar.gz", "d41d8cd98f00b204e9800998ecf8427e/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := files.ParseName(s)
		if err != nil {
			return
		}
		c := n.String()
		if strings.ContainsAny(c, "/\\\x00") || strings.Contains(c, "..") {
			t.Fatalf("ParseName(%q) accepted path syntax: %q", s, c)
		}
		n2, err := files.ParseName(c)
		if err != nil || n2 != n {
			t.Fatalf("canonical %q of %q does not round-trip: %v, %v", c, s, n2, err)
		}
	})
}

// FuzzParseRange: every returned range lies inside the file and is not
// empty, the ranges are in file order with a gap between any two (so their
// total never exceeds the file); no input panics.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-1", "bytes=-5", "bytes=5-", "bytes=0-0,2-3,-1", "bytes=9223372036854775807-", "bytes=-9223372036854775808", "bytes= 1 - 2", "bytes=0-9,0-9", "bytes=5-6,0-2,3-4"} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		rs, err := files.ParseRange(h, size)
		if err != nil {
			return
		}
		if len(rs) > files.MaxRanges {
			t.Fatalf("%d ranges", len(rs))
		}
		var total int64
		for i, r := range rs {
			if r.Start < 0 || r.Length <= 0 || r.Start+r.Length > size || r.Start+r.Length < r.Start {
				t.Fatalf("ParseRange(%q, %d) = %+v out of bounds", h, size, rs)
			}
			if i > 0 && r.Start <= rs[i-1].Start+rs[i-1].Length {
				t.Fatalf("ParseRange(%q, %d) = %+v: ranges overlap, touch or are out of order", h, size, rs)
			}
			total += r.Length
		}
		if total > size {
			t.Fatalf("ParseRange(%q, %d) = %+v: %d bytes", h, size, rs, total)
		}
	})
}

// FuzzThumbnailInput feeds arbitrary bytes to the header check and, when it
// passes with a small pixel cap, to the decoder and encoder: no panic, and
// nothing beyond the cap is decoded.
func FuzzThumbnailInput(f *testing.F) {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, 3, 2)))
	f.Add(b.Bytes(), uint8(2))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"), uint8(16))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		if err := files.CheckImageHeader(bytes.NewReader(data), 4096); err != nil {
			return
		}
		img, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		if b := img.Bounds(); int64(b.Dx())*int64(b.Dy()) > 4096 {
			t.Fatalf("decoded %v past the header check", b)
		}
		_, _ = files.EncodeThumbnail(io.Discard, img, 1+int(size)%64)
	})
}
