package app

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// patternReader yields n bytes of a 1 MiB random block repeated, its first
// 8 bytes replaced by seed so that every upload is new content.
type patternReader struct {
	block []byte
	off   int64
	n     int64
}

func newPattern(n int64, seed uint64) *patternReader {
	block := make([]byte, 1<<20)
	_, _ = rand.Read(block)
	binary.LittleEndian.PutUint64(block, seed)
	return &patternReader{block: block, n: n}
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	i := p.off % int64(len(p.block))
	k := copy(b, p.block[i:])
	k = int(min(int64(k), p.n-p.off))
	if p.off > 0 && i == 0 && k >= 8 { // only the first block carries the seed
		copy(b[:8], p.block[8:16])
	}
	p.off += int64(k)
	return k, nil
}

// uploadStream sends size bytes from r in chunks of chunk bytes through
// POST/PUT /fileUpload, each request body streamed (never built in
// memory), and returns the committed file's name.
func uploadStream(tb testing.TB, base string, r io.Reader, size, chunk int64) string {
	tb.Helper()
	token := ""
	for sent := int64(0); ; {
		n := min(chunk, size-sent)
		sent += n
		commit := sent == size
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			_ = mw.WriteField("Extension", "bin")
			_ = mw.WriteField("Commit", strconv.FormatBool(commit))
			fw, err := mw.CreateFormFile("File", "chunk")
			if err == nil {
				_, err = io.CopyN(fw, r, n)
			}
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		method, path := http.MethodPost, "/apis/cms/v1/fileUpload"
		if token != "" {
			method, path = http.MethodPut, path+"/"+token
		}
		req, _ := http.NewRequest(method, base+path, pr)
		req.SetBasicAuth("admin", "test-password")
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		var res uploadResult
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			tb.Fatalf("%s %s = %d: %v", method, path, resp.StatusCode, err)
		}
		if commit {
			return *res.GUID + ".bin"
		}
		token = *res.Token
	}
}

func download(tb testing.TB, base, name string) int64 {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/apis/cms/v1/files/"+name, nil)
	req.SetBasicAuth("admin", "test-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s = %d: %v", name, resp.StatusCode, err)
	}
	return n
}

// copyFile is the baseline: the same bytes written to a file (fsynced)
// and read back, on the same disk as the blob store.
func copyFile(tb testing.TB, dir string, r io.Reader) {
	tb.Helper()
	p := filepath.Join(dir, "baseline")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(f, r); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	_ = f.Close()
	f, err = os.Open(p)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, f)
	_ = f.Close()
	_ = os.Remove(p)
}

// blobSetups are the blob components the file benchmarks run on: files
// on disk (`cms run`) and the NATS object store of CMS_NATS_URL (as
// `cms serve` keeps them; skipped without it).
var blobSetups = []string{EngineFS, EngineNATSObjects}

// filesBenchServer is `cms run` (Management) with its blobs in engine; for
// the NATS object store, events and blobs go to the NATS of CMS_NATS_URL
// under a prefix of their own, deleted afterwards.
func filesBenchServer(b *testing.B, engine string) string {
	b.Helper()
	adjust := func(*Config) {}
	if engine == EngineNATSObjects {
		url := testenv.URL(b, testenv.NATSURL)
		prefix := fmt.Sprintf("filesbench%d", time.Now().UnixNano())
		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { // after the server's own clean-up, which stops it
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			setups.DeleteNATSNamespace(ctx, b, js, prefix)
			nc.Close()
		})
		adjust = func(cfg *Config) {
			cfg.Events = Component{Engine: EngineNATS, URL: url, Prefix: prefix}
			cfg.Blobs = Component{Engine: EngineNATSObjects, Prefix: prefix}
		}
	}
	return strings.TrimSuffix(benchServerWith(b, TargetManagement, adjust), "/apis/cms/v1")
}

// BenchmarkFiles uploads 64 MiB in two 32 MiB chunks through Management
// (HTTP multipart → gateway → gRPC stream → pkg/files → blob component)
// and downloads it, on `cms run` with each blob setup; the baseline in the
// same run writes the same bytes to a file (fsync) and reads them back. It
// reports MB/s of each and the ratios against the baseline.
func BenchmarkFiles(b *testing.B) {
	for _, engine := range blobSetups {
		b.Run("blobs="+engine, func(b *testing.B) { benchFiles(b, filesBenchServer(b, engine)) })
	}
}

func benchFiles(b *testing.B, base string) {
	const size, chunk = 64 << 20, 32 << 20
	dir := b.TempDir()
	var tCopy, tUp, tDown time.Duration
	seed := uint64(time.Now().UnixNano())
	for b.Loop() {
		seed++
		start := time.Now()
		copyFile(b, dir, newPattern(size, seed))
		tCopy += time.Since(start)
		start = time.Now()
		name := uploadStream(b, base, newPattern(size, seed), size, chunk)
		tUp += time.Since(start)
		start = time.Now()
		if n := download(b, base, name); n != size {
			b.Fatalf("downloaded %d bytes", n)
		}
		tDown += time.Since(start)
	}
	mbs := func(d time.Duration) float64 { return float64(size) * float64(b.N) / 1e6 / d.Seconds() }
	b.ReportMetric(mbs(tCopy), "copy-MB/s")
	b.ReportMetric(mbs(tUp), "upload-MB/s")
	b.ReportMetric(mbs(tDown), "download-MB/s")
	b.ReportMetric(tCopy.Seconds()/tUp.Seconds(), "upload/copy")
	b.ReportMetric(tCopy.Seconds()/tDown.Seconds(), "download/copy")
}

// BenchmarkFilesPeakRSS uploads and downloads 1 GiB once on `cms run` in
// this process, with each blob setup, and reports the peak resident set
// (VmHWM, reset first) against the resident set before: streaming keeps
// the difference to buffers, whatever the file size. Linux only.
func BenchmarkFilesPeakRSS(b *testing.B) {
	for _, engine := range blobSetups {
		b.Run("blobs="+engine, func(b *testing.B) { benchFilesPeakRSS(b, filesBenchServer(b, engine)) })
	}
}

func benchFilesPeakRSS(b *testing.B, base string) {
	const size, chunk = 1 << 30, 32 << 20
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	idle := procStatusKiB(b, "VmRSS")
	for b.Loop() {
		name := uploadStream(b, base, newPattern(size, uint64(time.Now().UnixNano())), size, chunk)
		if n := download(b, base, name); n != size {
			b.Fatalf("downloaded %d bytes", n)
		}
	}
	peak := procStatusKiB(b, "VmHWM")
	b.ReportMetric(float64(idle)/1024, "idle-RSS-MiB")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(peak-idle)/1024, "growth-MiB")
}

// procStatusKiB is a memory line of /proc/self/status in KiB; the
// benchmark is skipped where there is none.
func procStatusKiB(tb testing.TB, field string) int64 {
	tb.Helper()
	n, err := testenv.ProcStatus(0, field)
	if err != nil {
		tb.Skip(err)
	}
	return n >> 10
}
