package app

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	_ "image/jpeg" // decodes the thumbnails
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The thumbnail settings of the files scenario (filesConfig): a default
// size below the test image's 240 px and a cap below the built-in 2048, so
// that both settings are seen to reach Delivery.
const (
	thumbnailDefault = 100
	thumbnailCap     = 1000
)

// runThumbnailScenario reads thumbnails of BPOs through Delivery: sizes,
// 304, concurrent first requests, a non-image, a decompression bomb and
// invalid sizes. pictureType is a BPO type.
func runThumbnailScenario(t *testing.T, c filesClient, admin httpClient, pictureType int64) {
	img := image.NewNRGBA(image.Rect(0, 0, 240, 160))
	for y := range 160 {
		for x := range 240 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var photo bytes.Buffer
	if err := png.Encode(&photo, img); err != nil {
		t.Fatal(err)
	}
	var bomb bytes.Buffer
	_ = png.Encode(&bomb, image.NewNRGBA(image.Rect(0, 0, 1, 1)))
	b := bomb.Bytes() // the header now declares 100000 × 100000 pixels
	binary.BigEndian.PutUint32(b[16:], 100_000)
	binary.BigEndian.PutUint32(b[20:], 100_000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))

	var minVersion string
	for _, f := range []struct {
		apiID, ext string
		data       []byte
	}{{"photo", ".png", photo.Bytes()}, {"manual", ".pdf", []byte("%PDF-1.4 a manual")}, {"bombImage", ".png", b}} {
		r := c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, f.data, "Extension", f.ext, "Commit", "true")
		w := admin.create(obj(pictureType, f.apiID, v(11000, 0, *r.GUID), v(11005, 0, f.ext)))
		minVersion = strconv.FormatInt(w.Transaction.ID, 10)
	}
	base := "/delivery/api/branches/4/thumbnails/"
	var resp *http.Response
	var body []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, body = c.send(http.MethodGet, base+"bombImage", nil, "", "X-Cms-Min-Version", minVersion, "X-Cms-Max-Wait", "20s")
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("thumbnail of a bomb = %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	// Concurrent first requests all get the same thumbnail.
	var wg sync.WaitGroup
	etags := make([]string, 6)
	for i := range etags {
		wg.Go(func() {
			resp, _ := c.send(http.MethodGet, base+"photo?size=64", nil, "")
			etags[i] = resp.Header.Get("ETag")
			if resp.StatusCode != http.StatusOK {
				t.Errorf("concurrent thumbnail = %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	for _, tc := range []struct {
		query string
		want  int
	}{{"?size=64", 64}, {"?width=32", 64}, {"?size=100&width=32", 128}, {"", 128}, {"?size=1000", 240}} { // sizes snapped up to 64, 128, …
		resp, body := c.get(base+"photo"+tc.query, http.StatusOK)
		checkExposure(c, base+"photo"+tc.query, resp, false)
		got, format, err := image.Decode(bytes.NewReader(body))
		if err != nil || format != "jpeg" || resp.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("thumbnail%s: %s %s %v", tc.query, format, resp.Header.Get("Content-Type"), err)
		}
		if b := got.Bounds(); b.Dx() != tc.want {
			t.Errorf("thumbnail%s is %v, want %d px wide", tc.query, b, tc.want)
		}
		etag := resp.Header.Get("ETag")
		if etag == "" || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("thumbnail%s headers %v", tc.query, resp.Header)
		}
		if tc.query == "?size=64" && etag != etags[0] {
			t.Errorf("ETag %s, concurrent requests had %v", etag, etags)
		}
		if resp, body := c.get(base+"photo"+tc.query, http.StatusNotModified, "If-None-Match", etag); len(body) != 0 {
			t.Errorf("304 with a body: %v", resp.Header)
		}
	}
	for _, tc := range []struct {
		path string
		want int
	}{{"manual", http.StatusNotFound}, {"photo?size=1001", http.StatusBadRequest}, {"photo?size=5000", http.StatusBadRequest}, {"photo?size=-1", http.StatusBadRequest}, {"photo?size=0", http.StatusBadRequest}, {"photo?width=0", http.StatusBadRequest},
		{"photo?size=abc", http.StatusBadRequest}, {"999999", http.StatusNotFound}} {
		resp, body := c.get(base+tc.path, tc.want)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("thumbnails/%s = %d %s: %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}

// runDatabaseBinaryScenario reads GET /delivery/api/binaries/{id}: the
// file of the binary proxy object bpo (holding data) on the default
// branch, for callers who may read that branch only.
func runDatabaseBinaryScenario(t *testing.T, c filesClient, admin httpClient, bpo string, data []byte) {
	resp, body := c.get("/delivery/api/binaries/"+bpo, http.StatusOK)
	if !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("binaries/%s: %d bytes, %v", bpo, len(body), resp.Header)
	}
	checkExposure(c, "/delivery/api/binaries/"+bpo, resp, false)
	etag := resp.Header.Get("ETag")
	resp, _ = c.get("/delivery/api/binaries/"+bpo, http.StatusNotModified, "If-None-Match", etag)
	checkExposure(c, "/delivery/api/binaries/"+bpo+" (304)", resp, false)
	for _, tc := range []struct {
		id   string
		want int
	}{{"999999", http.StatusNotFound}, {"0", http.StatusNotFound}, {"-3", http.StatusBadRequest}, {"abc", http.StatusBadRequest}} {
		resp, body := c.get("/delivery/api/binaries/"+tc.id, tc.want)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("binaries/%s = %d %s: %s", tc.id, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// A reader of the default branch gets the file; a user without a
	// grant on it gets 403 (for every id: the RPC declares the default
	// branch, so nothing tells which binaries exist).
	admin.create(
		obj(110, "", v(1100, 0, "binreader"), v(1000, 201, "Reader"), v(1101, 0, "binreader-pw"), v(1104, 0, 4)),
		obj(110, "", v(1100, 0, "nobody"), v(1000, 201, "Nobody"), v(1101, 0, "nobody-pw")))
	for _, u := range []struct {
		name, password string
		want           int
	}{{"binreader", "binreader-pw", http.StatusOK}, {"nobody", "nobody-pw", http.StatusForbidden}} {
		var code int
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			req, _ := http.NewRequest(http.MethodGet, c.base+"/delivery/api/binaries/"+bpo, nil)
			req.SetBasicAuth(u.name, u.password)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			code = resp.StatusCode
			if code != http.StatusUnauthorized || time.Now().After(deadline) {
				break
			}
		}
		if code != u.want {
			t.Errorf("binaries/%s as %s = %d, want %d", bpo, u.name, code, u.want)
		}
	}
}
