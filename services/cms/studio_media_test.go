package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("media", studioMediaJourney)
}

// mediaChunk is the studio's chunk size (studio/src/data/upload.ts).
const mediaChunk = 8 << 20

// mediaModel is what the media journey creates through the API: a media
// type (binary proxy objects), a file reference attribute to it, a page
// type whose form lists it, and enough files in the library to scroll.
type mediaModel struct {
	photoType, pageType int64
	patterns            int
}

func setupMediaModel(t *testing.T, base string, branch int64) mediaModel {
	t.Helper()
	create := func(objs ...string) []int64 {
		t.Helper()
		var w writeAnswer
		b := mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch), `{"objects":[`+strings.Join(objs, ",")+`]}`)
		if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != len(objs) {
			t.Fatalf("create: %v: %s", err, b)
		}
		return w.CreatedObjectIDs
	}
	mm := mediaModel{patterns: 48}
	mm.photoType = create(`{"meta":{"typeRef":0,"apiIdentifier":"mediaPhoto"},"values":[` + value(1000, 201, "Photo") + "," + value(5009, 0, true) + `]}`)[0]
	hero := create(`{"meta":{"typeRef":10,"apiIdentifier":"mediaHero"},"values":[` + strings.Join([]string{value(1000, 201, "Hero image"),
		value(1001, 0, "BinRef"), value(1004, 0, false), value(1017, 0, false), value(1015, 0, mm.photoType)}, ",") + `]}`)[0]
	form := create(`{"meta":{"typeRef":50},"values":[` + value(1000, 201, "Page form") + "," +
		fmt.Sprintf(`{"attribute":5053,"language":0,"variant":0,"value":%d,"sortReverse":0}`, hero) + `]}`)[0]
	mm.pageType = create(`{"meta":{"typeRef":0,"apiIdentifier":"mediaPage"},"values":[` + value(1000, 201, "Landing") + "," + value(5001, 0, form) + `]}`)[0]
	// The library already holds files: 48 objects of one pattern image.
	guid := uploadViaAPI(t, base, ".png", pngBytes(t, 64, 48, 7, time.Now().UnixNano()))
	var objs []string
	for i := range mm.patterns {
		objs = append(objs, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s,%s]}`, mm.photoType,
			value(1000, 201, fmt.Sprintf("Pattern %02d", i+1)), value(11000, 0, guid), value(11005, 0, ".png")))
	}
	create(objs...)
	// Delivery (the index) has them before the editor looks.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b, _ := call(http.DefaultClient, http.MethodGet, fmt.Sprintf("%s/delivery/api/branches/%d/types/mediaPhoto/count", base, branch), "")
		var c struct {
			Count int `json:"count"`
		}
		if code == http.StatusOK && json.Unmarshal(b, &c) == nil && c.Count == mm.patterns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Delivery does not count the journey's files: %d %s", code, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return mm
}

// pngBytes is a PNG of w×h pixels whose colours depend on seed and salt
// (so its content is new to the store).
func pngBytes(t *testing.T, w, h int, seed uint8, salt int64) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*3) + seed, uint8(y*2) ^ seed, uint8(salt) ^ uint8(salt>>8), 255})
		}
	}
	img.SetNRGBA(0, 0, color.NRGBA{uint8(salt >> 16), uint8(salt >> 24), uint8(salt >> 32), 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadViaAPI stores a file in one request and returns its guid.
func uploadViaAPI(t *testing.T, base, ext string, data []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("Extension", ext)
	_ = mw.WriteField("Commit", "true")
	fw, _ := mw.CreateFormFile("File", "file"+ext)
	_, _ = fw.Write(data)
	_ = mw.Close()
	var up struct {
		GUID string `json:"guid"`
	}
	b := mustCall(t, http.StatusOK, http.MethodPost, base+"/apis/cms/v1/fileUpload", body.String(), "Content-Type", mw.FormDataContentType())
	if err := json.Unmarshal(b, &up); err != nil || up.GUID == "" {
		t.Fatalf("upload: %v: %s", err, b)
	}
	return up.GUID
}

// bpoValues reads a BPO's 11000, 11005 and 11001 and its type.
func bpoValues(t *testing.T, base string, branch, id int64) (typeRef int64, md5, ext, fileName string) {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%d", base, branch, id), "")
	var o struct {
		Meta struct {
			TypeRef int64 `json:"typeRef"`
		} `json:"meta"`
		Values []struct {
			Attribute int64 `json:"attribute"`
			Value     any   `json:"value"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	for _, v := range o.Values {
		s, _ := v.Value.(string)
		switch v.Attribute {
		case 11000:
			md5 = s
		case 11005:
			ext = s
		case 11001:
			fileName = s
		}
	}
	return o.Meta.TypeRef, md5, ext, fileName
}

// storedSize is the size of a stored file by its name (a one-byte range: its Content-Range says the size).
func storedSize(t *testing.T, base, name string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/apis/cms/v1/files/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", crashPassword)
	req.Header.Set("Range", "bytes=0-0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("GET files/%s: %d", name, resp.StatusCode)
	}
	return resp.Header.Get("Content-Range")
}

// uploadRow is the JavaScript of the upload row of a file name.
func uploadRow(name string) string {
	b, _ := json.Marshal(name)
	return fmt.Sprintf(`[...document.querySelectorAll("li.upload")].find(li => li.querySelector(".upload-name")?.textContent === %s)`, b)
}

// studioMediaJourney: the media library. On a branch of its own with a
// media type and 48 files, the grid loads thumbnails only for the cards in
// view and the rest as they scroll in; three files dropped at once upload
// with a progress bar each; objects are created from them; the same
// content again gets the duplicate notice; a 48 MiB file is paused and
// resumed (the chunk the pause aborted is sent again, once), then the
// connection drops mid-file (the server stores a chunk whose answer is
// lost, then every request fails for a while): the upload says so, goes on
// by itself when the connection is back, from what the server holds,
// sending no byte of that chunk again; the server's file has the file's
// MD5. Where used lists a page that refers to a file; Replace file points
// the object at new content; Download saves it; the search by name and by
// file type, and a file opened from the keyboard; a 200 MB upload keeps
// the tab's JavaScript heap flat (measured and logged); German; axe on
// each state.
func studioMediaJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Media work")
	mm := setupMediaModel(t, s.base, branch)
	dir := t.TempDir()
	salt := time.Now().UnixNano()
	sunsetPNG := pngBytes(t, 160, 100, 40, salt)
	sunset := writeMediaFile(t, dir, "sunset.png", sunsetPNG)
	forest := writeMediaFile(t, dir, "forest.png", pngBytes(t, 120, 160, 90, salt))
	report := writeMediaFile(t, dir, "report.pdf", []byte(fmt.Sprintf("%%PDF-1.4\n%% media journey %d\n%%%%EOF\n", salt)))
	copyOf := writeMediaFile(t, dir, "sunset-copy.png", sunsetPNG)
	sunsetV2 := writeMediaFile(t, dir, "sunset-v2.png", pngBytes(t, 200, 120, 150, salt))
	big := writeLargeFile(t, dir, "big.bin", 6*mediaChunk, uint8(salt))
	downloads := t.TempDir()

	p := s.page(t, "editor")
	p.login()
	p.allowDownloads(downloads)
	p.open(fmt.Sprintf("/studio/b/%d/content", branch))
	p.click("Media")
	p.waitFor("the media library", `!!document.querySelector(".drop-zone") && document.querySelectorAll(".media-card").length === 48`)
	if !strings.HasSuffix(studioEval[string](p, `location.pathname`), fmt.Sprintf("/b/%d/media", branch)) {
		t.Fatalf("the Media section's address: %s", studioEval[string](p, `location.pathname`))
	}
	// Thumbnails load as their cards come into view, not all at once.
	p.waitFor("the thumbnails in view", `document.querySelectorAll(".media-card .media-thumb img").length > 0`)
	time.Sleep(300 * time.Millisecond)
	thumbs := `performance.getEntriesByType("resource").filter(e => e.name.includes("/thumbnails/")).length`
	first := studioEval[int](p, thumbs)
	if first <= 0 || first >= mm.patterns {
		t.Fatalf("thumbnails read before scrolling: %d of %d cards (want only those in view)", first, mm.patterns)
	}
	p.shot("library")
	p.checkAccessibility("the media library")
	studioEval[bool](p, `(document.querySelector(".media-pane .pane-body").scrollTop = 1e6, true)`)
	p.waitFor("the thumbnails scrolled into view", thumbs+` >= 48`)
	t.Logf("thumbnails: %d of %d read before scrolling, all after", first, mm.patterns)
	studioEval[bool](p, `(document.querySelector(".media-pane .pane-body").scrollTop = 0, true)`)

	// Three files dropped at once: a progress bar each, all uploaded.
	p.recordUploads()
	p.dropFiles(".drop-zone", sunset, forest, report)
	for _, f := range []mediaFile{sunset, forest, report} {
		p.waitFor(f.name+" uploaded", uploadRow(f.name)+`?.dataset.state === "done"`)
	}
	if n := studioEval[int](p, `document.querySelectorAll("li.upload progress[aria-label^='Upload of']").length`); n != 3 {
		t.Fatalf("progress bars: %d, want 3", n)
	}
	if studioEval[bool](p, `!!document.querySelector(".upload-duplicate")`) {
		t.Fatal("a duplicate notice for new content")
	}
	p.shot("uploaded")
	// Binary proxy objects from the uploads.
	ids := map[string]int64{}
	for _, f := range []mediaFile{sunset, forest, report} {
		p.click("Create object for " + f.name)
		name := strings.TrimSuffix(f.name, filepath.Ext(f.name))
		p.waitFor("the object "+name, fmt.Sprintf(`!!new URLSearchParams(location.search).get("file") && `+
			`[...document.querySelectorAll(".media-card .media-name")].some(e => e.textContent === %q)`, name))
		ids[f.name] = int64(studioEval[float64](p, `Number(new URLSearchParams(location.search).get("file"))`))
		typ, md5, ext, fileName := bpoValues(t, s.base, branch, ids[f.name])
		if typ != mm.photoType || md5 != f.guid || ext != filepath.Ext(f.name) || fileName != f.name {
			t.Fatalf("the object of %s: type %d, 11000 %q, 11005 %q, 11001 %q; want %d, %q, %q, %q", f.name, typ, md5, ext, fileName, mm.photoType, f.guid, filepath.Ext(f.name), f.name)
		}
	}
	p.waitFor("the file's pane", `document.querySelector(".media-details")?.innerText.includes("report.pdf")`)
	p.shot("created")
	// The same content again: the notice.
	p.dropFiles(".drop-zone", copyOf)
	p.waitFor("the duplicate notice", uploadRow(copyOf.name)+`?.querySelector(".upload-duplicate")?.textContent.includes("The same content is already stored")`)
	p.shot("duplicate")
	for _, f := range []mediaFile{sunset, forest, report, copyOf} {
		p.click("Dismiss " + f.name)
	}

	mediaInterrupted(t, s, p, big)
	mediaFileActions(t, s, p, branch, mm, ids[sunset.name], sunsetV2, downloads)
	mediaSearch(p)
	mediaHeap(t, p, dir)

	// German.
	p.selectValue("Language", "de")
	p.waitText("Dateien auswählen")
	p.waitText("Medien")
	p.shot("german")
	p.checkAccessibility("the media library in German")
}

// mediaInterrupted: Pause and Resume, then a connection lost mid-file.
func mediaInterrupted(t *testing.T, s *studioSetup, p *studioPage, big mediaFile) {
	g := p.gateUploads()
	g.set(gateHold, 0)
	p.dropFiles(".drop-zone", big)
	row := uploadRow(big.name)
	p.waitFor("the first chunk acknowledged, the second in flight", fmt.Sprintf(`%s?.dataset.acked === "%d" && %s?.dataset.sent === "%d"`, row, mediaChunk, row, 2*mediaChunk))
	p.shot("big-uploading")
	p.click("Pause big.bin")
	p.waitFor("paused", row+`?.dataset.state === "paused"`)
	time.Sleep(300 * time.Millisecond)
	if a := studioEval[string](p, row+`.dataset.acked`); a != fmt.Sprint(mediaChunk) {
		t.Fatalf("paused at %s bytes, want %d", a, mediaChunk)
	}
	p.shot("paused")
	p.checkAccessibility("an upload paused")
	// Resume: the size probe and one chunk pass, the next chunk is stored
	// but its answer lost, then the connection is down.
	g.set(gateLoseNext, 2)
	p.click("Resume big.bin")
	p.waitFor("the connection lost", row+`?.dataset.state === "reconnecting"`)
	if a := studioEval[string](p, row+`.dataset.acked`); a != fmt.Sprint(2*mediaChunk) {
		t.Fatalf("acknowledged when the connection dropped: %s, want %d", a, 2*mediaChunk)
	}
	p.waitText("Connection lost, trying again…")
	p.shot("connection-lost")
	time.Sleep(1500 * time.Millisecond)
	g.set(gatePass, 0)
	back := time.Now()
	p.waitWithin("the upload goes on", row+`?.dataset.state === "done"`, 30*time.Second)
	t.Logf("the upload went on %v after the connection came back", time.Since(back).Round(time.Millisecond))
	p.shot("big-done")
	p.stopGate()
	held, lost, refused := g.counts()
	if held != 1 || lost != 1 || refused < 1 {
		t.Fatalf("the gate: %d held, %d answers lost, %d refused; want 1, 1, ≥ 1", held, lost, refused)
	}
	var sent, probes int64
	for _, r := range p.uploadsOf(".bin") {
		if r.Bytes > 0 {
			sent += r.Bytes
		}
		if r.Bytes == 0 && r.Method == "PUT" {
			probes++
		}
	}
	// Sent again: the chunk the pause aborted (it never reached the server),
	// not the one whose answer was lost (the server held it).
	if resent := sent - big.size; resent != mediaChunk || probes < 2 {
		t.Fatalf("bytes sent %d for %d (re-sent %d, want %d: only the chunk the pause aborted), %d size probes (want ≥ 2)", sent, big.size, resent, mediaChunk, probes)
	}
	t.Logf("big.bin: %d bytes, %d sent (%d re-sent: the chunk aborted by Pause; 0 of the chunk whose answer was lost), %d size probes, %d requests refused while down",
		big.size, sent, sent-big.size, probes, refused)
	if cr := storedSize(t, s.base, big.guid+".bin"); cr != fmt.Sprintf("bytes 0-0/%d", big.size) {
		t.Fatalf("the stored file %s.bin (the file's MD5): %s", big.guid, cr)
	}
	p.click("Dismiss " + big.name)
}

// mediaFileActions: where used, replace, download.
func mediaFileActions(t *testing.T, s *studioSetup, p *studioPage, branch int64, mm mediaModel, sunsetID int64, v2 mediaFile, downloads string) {
	var w writeAnswer
	b := mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", s.base, branch),
		fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s,{"attribute":%d,"language":0,"variant":0,"value":%d}]}]}`,
			mm.pageType, value(1000, 201, "Landing page"), mediaHeroID(t, s.base, branch), sunsetID))
	if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != 1 {
		t.Fatalf("create the page: %v: %s", err, b)
	}
	page := w.CreatedObjectIDs[0]
	// Delivery's reverse references read the index: wait until it has the page.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b, _ := call(http.DefaultClient, http.MethodGet, fmt.Sprintf("%s/delivery/api/branches/%d/objects/%d?resolveReverse=mediaHero&resolveReverseDepth=1", s.base, branch, sunsetID), "")
		if code == http.StatusOK && strings.Contains(string(b), fmt.Sprint(page)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Delivery does not show the page's reference: %d %s", code, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.click("sunset.png")
	p.waitFor("where used", `[...document.querySelectorAll(".where-used a")].map(a => a.textContent).join() === "Landing page"`)
	p.waitText("through Hero image")
	p.shot("where-used")
	p.checkAccessibility("a file's pane with where used")
	p.step("open the page", studioWait, chromedp.Click(chromedp.JSPath(`document.querySelector(".where-used a")`), chromedp.NodeVisible))
	p.waitFor("the page opened", fmt.Sprintf(`location.pathname.endsWith("/content/%d/%d")`, mm.pageType, page))
	p.step("back", studioWait, chromedp.NavigateBack())
	p.waitFor("back in the library", `!!document.querySelector(".media-details") && document.querySelector(".media-details").innerText.includes("sunset.png")`)
	p.recordUploads()

	// Replace file: new content, the same object.
	p.chooseFile("Replace file of sunset", v2)
	p.waitFor("the replacement uploaded", uploadRow(v2.name)+`?.dataset.state === "done"`)
	p.waitText("The file of sunset was replaced.")
	p.waitFor("the new content in the pane", fmt.Sprintf(`document.querySelector(".media-details")?.innerText.includes(%q)`, v2.guid))
	_, md5, ext, fileName := bpoValues(t, s.base, branch, sunsetID)
	if md5 != v2.guid || ext != ".png" || fileName != v2.name {
		t.Fatalf("the replaced object: 11000 %q, 11005 %q, 11001 %q; want %q, .png, %q", md5, ext, fileName, v2.guid, v2.name)
	}
	p.waitFor("the new thumbnail", `document.querySelector(".media-details .media-thumb img")?.naturalWidth > 0`)
	p.shot("replaced")
	p.click("Dismiss " + v2.name)

	// Download: the file as stored, under its name.
	p.click("Download sunset")
	got := waitDownload(t, filepath.Join(downloads, v2.name), v2.size)
	if want := readFile(t, v2.path); !bytes.Equal(got, want) {
		t.Fatal("the download differs from the file uploaded")
	}
	p.shot("downloaded")
}

// mediaHeroID is the id of the attribute mediaHero.
func mediaHeroID(t *testing.T, base string, branch int64) int64 {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/mediaHero", base, branch), "")
	var o struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Meta.ID == 0 {
		t.Fatalf("mediaHero: %v: %s", err, b)
	}
	return o.Meta.ID
}

// mediaSearch: by name, by file type.
func mediaSearch(p *studioPage) {
	names := `[...document.querySelectorAll(".media-card .media-name")].map(e => e.textContent).join()`
	p.fill("Search by name", "forest")
	p.waitFor("the search", names+` === "forest"`)
	if q := studioEval[string](p, `new URLSearchParams(location.search).get("q")`); q != "forest" {
		p.t.Fatalf("the search in the address: %q", q)
	}
	p.shot("search")
	p.fill("Search by name", "")
	p.waitFor("the library again", `document.querySelectorAll(".media-card").length === 51`)
	p.waitFor("the file types", `[...document.querySelector("select[aria-label='File type']").options].some(o => o.value === ".pdf")`)
	p.selectValue("File type", ".pdf")
	p.waitFor("the PDF only", names+` === "report"`)
	p.shot("file-type")
	p.checkAccessibility("the search by file type")
	// By keyboard: from the search, Tab past the file type to the card, Enter opens it.
	p.click("Close")
	p.waitFor("the pane closed", `!document.querySelector(".media-details")`)
	p.step("Tab to the card", studioWait, chromedp.Focus(labelled("Search by name")), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	if got := studioEval[string](p, `document.activeElement.textContent`); got != "PDFreport.pdf" {
		p.t.Fatalf("the focus after two Tabs from the search: %q, want the report's card", got)
	}
	p.step("Enter opens it", studioWait, chromedp.KeyEvent(kb.Enter))
	p.waitFor("the report's pane", `document.querySelector(".media-details")?.innerText.includes("report.pdf")`)
	p.selectValue("File type", "")
	p.waitFor("the library again", `document.querySelectorAll(".media-card").length === 51`)
}

// mediaHeap uploads 200 MB (CMS_STUDIO_MEDIA_BYTES: another size, e.g.
// 1073741824 for the 1 GiB measurement in docs/studio-screens.md) and samples the
// tab's JavaScript heap meanwhile.
func mediaHeap(t *testing.T, p *studioPage, dir string) {
	size := int64(200_000_000)
	if v := os.Getenv("CMS_STUDIO_MEDIA_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("CMS_STUDIO_MEDIA_BYTES=%q: want a positive number of bytes", v)
		}
		size = n
	}
	large := writeLargeFile(t, dir, "large.dat", size, 0x5a)
	if _, err := chromedp.Call(p.ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
		t.Fatalf("collect garbage: %v", err)
	}
	used0, backing0 := p.heapUsage()
	ctx, cancel := context.WithCancel(p.ctx)
	var mu sync.Mutex
	var maxUsed, maxBacking float64
	var samples int
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if r, err := chromedp.Call(ctx, runtimeHeap, cdp.Empty{}); err == nil {
				mu.Lock()
				maxUsed, maxBacking, samples = max(maxUsed, r.UsedSize), max(maxBacking, r.BackingStorageSize), samples+1
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	p.dropFiles(".drop-zone", large)
	p.waitWithin("the large file uploaded", uploadRow(large.name)+`?.dataset.state === "done"`, 10*time.Minute)
	took := time.Since(start)
	cancel()
	wg.Wait()
	const mib = 1 << 20
	t.Logf("%d bytes uploaded in %v (%.0f MB/s): JavaScript heap %.1f MiB before, at most %.1f MiB during (%d samples); array buffers %.1f MiB before, at most %.1f MiB",
		large.size, took.Round(time.Millisecond), float64(large.size)/1e6/took.Seconds(), used0/mib, maxUsed/mib, samples, backing0/mib, maxBacking/mib)
	if samples == 0 || maxUsed+maxBacking-used0-backing0 > 64*mib {
		t.Fatalf("the tab's memory grew by %.1f MiB during an upload of %d bytes (%d samples): the file is not read slice by slice",
			(maxUsed+maxBacking-used0-backing0)/mib, large.size, samples)
	}
	if cr := storedSize(t, p.s.base, large.guid+".dat"); cr != fmt.Sprintf("bytes 0-0/%d", large.size) {
		t.Fatalf("the stored large file: %s", cr)
	}
	p.click("Dismiss " + large.name)
}
