package files_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	blobsfs "github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/files"
)

// BenchmarkUploadFS uploads 64 MiB in two 32 MiB chunks straight into
// pkg/files over the file system blob store (no HTTP, no gRPC); the
// baseline in the same run writes the same bytes to a file (fsync). It
// reports MB/s of each and their ratio, the domain's share of the cost
// BenchmarkFiles (services/internal/app) measures end to end.
func BenchmarkUploadFS(b *testing.B) {
	const size, chunkSize = 64 << 20, 32 << 20
	data := randBytes(size)
	store, err := blobsfs.New(b.TempDir(), blobsfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	svc := files.New(store, files.Options{})
	dir := b.TempDir()
	ctx := context.Background()
	var tCopy, tUp time.Duration
	seed := byte(0)
	for b.Loop() {
		seed++
		data[0] = seed // new content each time
		start := time.Now()
		f, err := os.Create(filepath.Join(dir, "baseline"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
		tCopy += time.Since(start)
		start = time.Now()
		r, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr("bin"), Data: &onlyReader{data[:chunkSize]}})
		if err != nil {
			b.Fatal(err)
		}
		r, err = svc.ContinueUpload(ctx, r.Token, files.Chunk{Commit: true, Data: &onlyReader{data[chunkSize:]}})
		if err != nil || r.Size != size {
			b.Fatal(r, err)
		}
		tUp += time.Since(start)
	}
	mbs := func(d time.Duration) float64 { return float64(size) * float64(b.N) / 1e6 / d.Seconds() }
	b.ReportMetric(mbs(tCopy), "copy-MB/s")
	b.ReportMetric(mbs(tUp), "upload-MB/s")
	b.ReportMetric(tCopy.Seconds()/tUp.Seconds(), "upload/copy")
}

// onlyReader hides every method but Read (as a request body does).
type onlyReader struct{ b []byte }

func (o *onlyReader) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, o.b)
	o.b = o.b[n:]
	return n, nil
}
