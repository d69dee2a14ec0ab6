package files_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/blobs"
	blobsfs "github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// backends runs fn on a file system blob store and, with CMS_NATS_URL, on
// a bucket of the NATS object store.
func backends(t *testing.T, fn func(t *testing.T, store blobs.Store)) {
	t.Run("fs", func(t *testing.T) {
		s, err := blobsfs.New(t.TempDir(), blobsfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
	t.Run("nats", func(t *testing.T) {
		nc, err := nats.Connect(testenv.URL(t, testenv.NATSURL))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		var b [6]byte
		_, _ = rand.Read(b[:])
		bucket := "T_FILES_" + hex.EncodeToString(b[:])
		s, err := natsobj.New(t.Context(), js, natsobj.Options{Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = js.DeleteObjectStore(ctx, bucket)
		})
		fn(t, s)
	})
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func ptr[T any](v T) *T { return &v }

func chunk(data []byte, commit bool) files.Chunk {
	return files.Chunk{Data: bytes.NewReader(data), Commit: commit}
}

func wantKind(t *testing.T, what string, err error, k errkind.Kind) {
	t.Helper()
	if !errors.Is(err, k) {
		t.Fatalf("%s: err = %v, want kind %v", what, err, k)
	}
}

func TestUploadThreeChunksAndRead(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		svc := files.New(store, files.Options{MaxChunkBytes: 1 << 20})
		data := randBytes(2<<20 + 12345)
		parts := [][]byte{data[:1<<20], data[1<<20 : 2<<20], data[2<<20:]}
		first := files.Chunk{Extension: ptr("png"), Data: bytes.NewReader(parts[0])}
		res, err := svc.StartUpload(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if res.Size != 1<<20 || res.Extension != ".png" || !strings.HasSuffix(res.Token, ".png") || res.GUID != "" || res.Created != nil {
			t.Fatalf("first chunk: %+v", res)
		}
		// A restart between chunks: a new Service over the same store.
		svc = files.New(store, files.Options{MaxChunkBytes: 1 << 20})
		res, err = svc.ContinueUpload(ctx, res.Token, chunk(parts[1], false))
		if err != nil || res.Size != 2<<20 {
			t.Fatalf("second chunk: %+v, %v", res, err)
		}
		// The token works without its extension too.
		res, err = svc.ContinueUpload(ctx, strings.TrimSuffix(res.Token, ".png"), chunk(parts[2], true))
		if err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(data)
		if res.Size != int64(len(data)) || res.GUID != files.GUID(sum) || res.Created == nil || !*res.Created || res.Token != "" {
			t.Fatalf("commit: %+v", res)
		}
		// Served under its GUID and its 32-hex form.
		for _, name := range []string{res.GUID + ".png", hex.EncodeToString(sum[:]) + ".png", strings.ToUpper(res.GUID) + ".png"} {
			n, err := files.ParseName(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := svc.Stat(ctx, n)
			if err != nil || f.Size != int64(len(data)) || f.ContentType != "image/png" || f.ETag != `"`+hex.EncodeToString(sum[:])+`"` {
				t.Fatalf("Stat(%s) = %+v, %v", name, f, err)
			}
			if got := read(t, svc, f, ""); !bytes.Equal(got, data) {
				t.Fatalf("read %s: %d bytes differ", name, len(got))
			}
		}
		// The same content again: not created, stored once.
		res2, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr(".jpg"), Data: bytes.NewReader(data), Commit: true})
		if err == nil {
			t.Fatal("a 2 MiB chunk passed a 1 MiB chunk limit")
		}
		wantKind(t, "oversized chunk", err, errkind.TooLarge)
		svc2 := files.New(store, files.Options{MaxChunkBytes: 4 << 20})
		res2, err = svc2.StartUpload(ctx, files.Chunk{Extension: ptr(".jpg"), Data: bytes.NewReader(data), Commit: true})
		if err != nil || res2.Created == nil || *res2.Created || res2.GUID != res.GUID || res2.Extension != ".jpg" {
			t.Fatalf("same content again: %+v, %v", res2, err)
		}
		// The committed upload is gone.
		_, err = svc.ContinueUpload(ctx, res.Token, chunk([]byte("x"), false))
		wantKind(t, "continue after commit", err, errkind.Invalid)
		left := 0
		_ = store.Walk(ctx, "uploads/", func(blobs.Info) error { left++; return nil })
		if left != 0 {
			t.Errorf("%d upload blobs left after commits", left)
		}
	})
}

func read(t *testing.T, svc *files.Service, f files.File, rangeHeader string) []byte {
	t.Helper()
	resp, err := svc.Read(f, rangeHeader)
	if err != nil {
		t.Fatalf("Read(%q): %v", rangeHeader, err)
	}
	var buf bytes.Buffer
	if err := svc.WriteTo(t.Context(), resp, &buf); err != nil {
		t.Fatal(err)
	}
	if resp.Length >= 0 && int64(buf.Len()) != resp.Length {
		t.Fatalf("Read(%q): %d bytes, Length says %d", rangeHeader, buf.Len(), resp.Length)
	}
	return buf.Bytes()
}

func TestLimitsAndErrors(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		svc := files.New(store, files.Options{MaxChunkBytes: 1000, MaxFileBytes: 2500})
		_, err := svc.StartUpload(ctx, files.Chunk{Data: bytes.NewReader([]byte("x"))})
		wantKind(t, "no extension", err, errkind.Invalid)
		_, err = svc.StartUpload(ctx, files.Chunk{Extension: ptr("png")})
		wantKind(t, "no file", err, errkind.Invalid)
		_, err = svc.StartUpload(ctx, files.Chunk{Extension: ptr("../etc"), Data: bytes.NewReader(nil)})
		wantKind(t, "bad extension", err, errkind.Invalid)
		_, err = svc.StartUpload(ctx, files.Chunk{Extension: ptr("bin"), Data: bytes.NewReader(randBytes(1001))})
		wantKind(t, "chunk over the limit", err, errkind.TooLarge)
		res, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr("bin"), Data: bytes.NewReader(randBytes(1000))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = svc.ContinueUpload(ctx, res.Token, chunk(randBytes(1000), false)); err != nil {
			t.Fatal(err)
		}
		_, err = svc.ContinueUpload(ctx, res.Token, chunk(randBytes(501), true))
		wantKind(t, "total over the limit", err, errkind.Unprocessable)
		// The rejected chunk left the upload as it was.
		res, err = svc.ContinueUpload(ctx, res.Token, chunk(randBytes(500), false))
		if err != nil || res.Size != 2500 {
			t.Fatalf("after a rejected chunk: %+v, %v", res, err)
		}
		_, err = svc.ContinueUpload(ctx, res.Token, files.Chunk{Commit: true})
		wantKind(t, "commit without a file", err, errkind.Invalid)
		res, err = svc.ContinueUpload(ctx, res.Token, chunk(nil, true)) // an empty file part commits
		if err != nil || res.Size != 2500 || res.GUID == "" {
			t.Fatalf("empty commit chunk: %+v, %v", res, err)
		}
		for _, tok := range []string{"", "nope", "../../etc/passwd", strings.Repeat("a", 32) + "/x", strings.Repeat("A", 32), strings.Repeat("a", 32) + ".png"} {
			_, err = svc.ContinueUpload(ctx, tok, chunk([]byte("x"), false))
			wantKind(t, "token "+tok, err, errkind.Invalid)
			wantKind(t, "cancel "+tok, svc.CancelUpload(ctx, tok), errkind.Invalid)
		}
		// Cancel removes the upload.
		res, err = svc.StartUpload(ctx, files.Chunk{Extension: ptr(".txt"), Data: strings.NewReader("hello")})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.CancelUpload(ctx, res.Token); err != nil {
			t.Fatal(err)
		}
		_, err = svc.ContinueUpload(ctx, res.Token, chunk([]byte("x"), true))
		wantKind(t, "continue after cancel", err, errkind.Invalid)
		wantKind(t, "cancel twice", svc.CancelUpload(ctx, res.Token), errkind.Invalid)
		n, _ := files.ParseName(strings.Repeat("0", 32) + ".png")
		_, err = svc.Stat(ctx, n)
		wantKind(t, "missing file", err, errkind.NotFound)
	})
}

func TestExpireUploads(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		now := time.Now()
		clock := func() time.Time { return now }
		svc := files.New(store, files.Options{UploadTTL: time.Hour, Now: clock})
		old, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr("txt"), Data: strings.NewReader("abandoned")})
		if err != nil {
			t.Fatal(err)
		}
		// Nothing is older than an hour yet.
		if n, err := svc.ExpireUploads(ctx); err != nil || n != 0 {
			t.Fatalf("ExpireUploads now = %d, %v", n, err)
		}
		now = now.Add(2 * time.Hour) // the blobs' clocks stay real: they now look 2h old
		if n, err := svc.ExpireUploads(ctx); err != nil || n != 1 {
			t.Fatalf("ExpireUploads 2h later = %d, %v", n, err)
		}
		_, err = svc.ContinueUpload(ctx, old.Token, chunk([]byte("x"), true))
		wantKind(t, "continue after expiry", err, errkind.Invalid)
	})
}

func TestRanges(t *testing.T) {
	s, err := blobsfs.New(t.TempDir(), blobsfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := files.New(s, files.Options{})
	data := []byte("0123456789abcdefghij")
	res, err := svc.StartUpload(t.Context(), files.Chunk{Extension: ptr("txt"), Data: bytes.NewReader(data), Commit: true})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := files.ParseName(res.GUID + ".txt")
	f, err := svc.Stat(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ header, want, contentRange string }{
		{"bytes=0-3", "0123", "bytes 0-3/20"},
		{"bytes=15-", "fghij", "bytes 15-19/20"},
		{"bytes=-4", "ghij", "bytes 16-19/20"},
		{"bytes=-100", string(data), "bytes 0-19/20"},
		{"bytes=18-100", "ij", "bytes 18-19/20"},
		{"bytes=30-40, 2-2", "2", "bytes 2-2/20"},
		{"bytes=5-2", string(data), ""},  // invalid: ignored
		{"items=0-1", string(data), ""},  // unknown unit: ignored
		{"bytes=abc", string(data), ""},  // invalid: ignored
		{"bytes=+1-2", string(data), ""}, // signs are not digits
	} {
		resp, err := svc.Read(f, tc.header)
		if err != nil {
			t.Fatalf("%q: %v", tc.header, err)
		}
		if got := read(t, svc, f, tc.header); string(got) != tc.want || resp.ContentRange != tc.contentRange {
			t.Errorf("%q: %q %q, want %q %q", tc.header, got, resp.ContentRange, tc.want, tc.contentRange)
		}
	}
	for _, h := range []string{"bytes=20-", "bytes=100-200", "bytes=-0", "bytes=25-30,40-"} {
		_, err := svc.Read(f, h)
		wantKind(t, h, err, errkind.RangeNotSatisfiable)
	}
	if got := files.UnsatisfiedRange(f); got != "bytes */20" {
		t.Errorf("UnsatisfiedRange = %q", got)
	}
	// Several ranges: multipart/byteranges.
	resp, err := svc.Read(f, "bytes=0-1,-2")
	if err != nil || resp.Status != 206 {
		t.Fatal(resp, err)
	}
	mt, params, err := mime.ParseMediaType(resp.ContentType)
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("content type %q", resp.ContentType)
	}
	mr := multipart.NewReader(bytes.NewReader(read(t, svc, f, "bytes=0-1,-2")), params["boundary"])
	var got []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		got = append(got, p.Header.Get("Content-Range")+"="+string(b))
	}
	if strings.Join(got, ";") != "bytes 0-1/20=01;bytes 18-19/20=ij" {
		t.Errorf("multipart ranges = %q", got)
	}
}

func TestParseName(t *testing.T) {
	good := map[string]string{
		"d41d8cd9-8f00-b204-e980-0998ecf8427e.png": "d41d8cd9-8f00-b204-e980-0998ecf8427e.png",
		"D41D8CD98F00B204E9800998ECF8427E.JPG":     "d41d8cd9-8f00-b204-e980-0998ecf8427e.JPG",
		"d41d8cd98f00b204e9800998ecf8427e":         "d41d8cd9-8f00-b204-e980-0998ecf8427e",
		"d41d8cd98f00b204e9800998ecf8427e.tar.gz":  "d41d8cd9-8f00-b204-e980-0998ecf8427e.tar.gz",
	}
	for in, want := range good {
		n, err := files.ParseName(in)
		if err != nil || n.String() != want {
			t.Errorf("ParseName(%q) = %v, %v; want %s", in, n, err, want)
		}
	}
	for _, in := range []string{"", "x.png", "../d41d8cd98f00b204e9800998ecf8427e", "d41d8cd98f00b204e9800998ecf8427e/../x",
		"d41d8cd98f00b204e9800998ecf8427e.", "d41d8cd98f00b204e9800998ecf8427e..png", "d41d8cd98f00b204e9800998ecf8427e\x00.png",
		"d41d8cd98f00b204e9800998ecf8427e.p\\g", "d41d8cd98f00b204e9800998ecf8427e" + strings.Repeat("x", 40),
		"d41d8cd98f00b204e9800998ecf8427g.png", "d41d8cd9-8f00-b204-e980-0998ecf8427.png", "d41d8cd98f00b204e9800998ecf8427e.png/"} {
		_, err := files.ParseName(in)
		wantKind(t, "ParseName "+in, err, errkind.Invalid)
	}
}

// An empty chunk appends nothing and answers the size held: how a client
// that lost a chunk's answer learns where to continue (the studio's uploads
// after a dropped connection or a pause).
func TestEmptyChunkAnswersTheSize(t *testing.T) {
	backends(t, func(t *testing.T, store blobs.Store) {
		ctx := t.Context()
		svc := files.New(store, files.Options{MaxChunkBytes: 1 << 20})
		data := randBytes(3000)
		res, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr("bin"), Data: bytes.NewReader(data[:1000])})
		if err != nil {
			t.Fatal(err)
		}
		tok := res.Token
		if res, err = svc.ContinueUpload(ctx, tok, chunk(data[1000:2000], false)); err != nil || res.Size != 2000 {
			t.Fatalf("second chunk: %+v, %v", res, err)
		}
		for range 2 {
			res, err = svc.ContinueUpload(ctx, tok, chunk(nil, false))
			if err != nil || res.Size != 2000 || res.Token != tok || res.GUID != "" {
				t.Fatalf("an empty chunk: %+v, %v; want size 2000, the same token, no commit", res, err)
			}
		}
		res, err = svc.ContinueUpload(ctx, tok, chunk(data[2000:], true))
		if err != nil || res.Size != 3000 || res.GUID != files.GUID(md5.Sum(data)) {
			t.Fatalf("commit: %+v, %v", res, err)
		}
		// Committed, the token is unknown: the empty chunk's question is refused.
		_, err = svc.ContinueUpload(ctx, tok, chunk(nil, false))
		wantKind(t, "an empty chunk after the commit", err, errkind.Invalid)
	})
}
