package files_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/fs"
	"github.com/cmsplatform/cms/pkg/files"
)

// TestMeasureThumbnailLoad measures Reliability II item 4 (run with
// CMS_MEASURE_FAIRNESS=1; it uses only API that main has, so the same
// file measures before and after in one run): one user asks for 40
// distinct sizes of a ~280 KB PNG at once while another user asks for a
// thumbnail of a small image; it prints the time of the 40, the other
// user's wait, the thumbnails stored and the peak RSS growth.
func TestMeasureThumbnailLoad(t *testing.T) {
	if os.Getenv("CMS_MEASURE_FAIRNESS") == "" {
		t.Skip("a measurement: set CMS_MEASURE_FAIRNESS=1")
	}
	store, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := files.New(store, files.Options{})
	img := image.NewNRGBA(image.Rect(0, 0, 4000, 3000))
	for y := range 3000 {
		for x := range 4000 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x / 16), uint8(y / 12), uint8((x*7 ^ y*13) & 0x3f), 255})
		}
	}
	var big bytes.Buffer
	_ = png.Encode(&big, img)
	n := commit(t, svc, ".png", big.Bytes())
	var small bytes.Buffer
	_ = png.Encode(&small, image.NewNRGBA(image.Rect(0, 0, 300, 200)))
	other := commit(t, svc, ".png", small.Bytes())
	runtime.GC()
	rss0 := vmHWM()
	hammer := auth.WithPrincipal(t.Context(), auth.Principal{Name: "hammer"})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if _, err := svc.Thumbnail(hammer, n, 50+i*47); err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the 40 are queued
	otherStart := time.Now()
	if _, err := svc.Thumbnail(auth.WithPrincipal(t.Context(), auth.Principal{Name: "other"}), other, 100); err != nil {
		t.Fatal(err)
	}
	otherWait := time.Since(otherStart)
	wg.Wait()
	total := time.Since(start)
	stored := 0
	_ = store.Walk(t.Context(), "thumbnails/"+n.Hex()+"/", func(blobs.Info) error { stored++; return nil })
	fmt.Printf("MEASURE thumbnails: PNG %d KB 4000x3000; 40 sizes in %v; other user's thumbnail %v; %d stored; peak RSS +%d MB\n",
		big.Len()>>10, total.Round(time.Millisecond), otherWait.Round(time.Millisecond), stored, (vmHWM()-rss0)>>10)
}

// vmHWM is the process's peak RSS in KiB.
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return n
		}
	}
	return 0
}

// TestMeasureOpenUploads measures the open uploads of Reliability II
// item 5 (CMS_MEASURE_FAIRNESS=1; only API main has): a user without
// grants starts 3,000 uploads of 100 KB and never commits them; it
// prints how many were accepted and the bytes they hold on disk.
func TestMeasureOpenUploads(t *testing.T) {
	if os.Getenv("CMS_MEASURE_FAIRNESS") == "" {
		t.Skip("a measurement: set CMS_MEASURE_FAIRNESS=1")
	}
	store, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := files.New(store, files.Options{})
	ctx := auth.WithPrincipal(t.Context(), auth.Principal{Name: "nobody"})
	part := make([]byte, 100<<10)
	accepted, refused := 0, 0
	for range 3000 {
		if _, err := svc.StartUpload(ctx, files.Chunk{Extension: ptr(".bin"), Data: bytes.NewReader(part)}); err != nil {
			refused++
		} else {
			accepted++
		}
	}
	var held int64
	_ = store.Walk(t.Context(), "uploads/", func(i blobs.Info) error { held += i.Size; return nil })
	fmt.Printf("MEASURE uploads: %d of 3000 open uploads accepted, %d refused; %d MB held\n", accepted, refused, held>>20)
}
