package main

import (
	"context"
	"crypto/md5" //nolint:gosec // the content address of files (docs/files.md), not a security hash
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/cmsplatform/cms/pkg/files"
)

// The media journey's tools: files on disk for the browser to upload, a
// drop of them onto the page (Input.dispatchDragEvent with files, as a
// person drags them from the desktop), a gate on the browser's upload
// requests (Fetch interception: hold a chunk, lose an answer after the
// server stored the chunk, refuse every request while "the connection is
// down"), a record in the page of every chunk request it sent, and the tab's
// JavaScript heap.

// mediaFile is a file the journey uploads.
type mediaFile struct {
	name, path string
	size       int64
	guid       string // the MD5 in GUID form: the name the API gives the content
}

// writeMediaFile writes data to dir/name.
func writeMediaFile(t *testing.T, dir, name string, data []byte) mediaFile {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return mediaFile{name: name, path: p, size: int64(len(data)), guid: files.GUID(md5.Sum(data))} //nolint:gosec // content address
}

// writeLargeFile writes size bytes of a pattern to dir/name in 1 MiB
// blocks (each block differs, so the content is new to the store).
func writeLargeFile(t *testing.T, dir, name string, size int64, seed byte) mediaFile {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p) //nolint:gosec // a file of the test's own temporary directory
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New() //nolint:gosec // content address
	block := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(block)) {
		for i := range block {
			block[i] = byte(i) ^ byte(off>>20) ^ seed
		}
		n := min(int64(len(block)), size-off)
		if _, err := f.Write(block[:n]); err != nil {
			t.Fatal(err)
		}
		h.Write(block[:n])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var sum [md5.Size]byte
	copy(sum[:], h.Sum(nil))
	return mediaFile{name: name, path: p, size: size, guid: files.GUID(sum)}
}

// dropFiles drags files from outside the page onto the element sel and
// drops them there.
func (p *studioPage) dropFiles(sel string, fs ...mediaFile) {
	p.t.Helper()
	var paths []string
	for _, f := range fs {
		paths = append(paths, f.path)
	}
	b, _ := json.Marshal(sel)
	p.step(fmt.Sprintf("drop %d files", len(fs)), studioWait, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		pos, err := chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = document.querySelector(%s).getBoundingClientRect(); `+
			`return [r.x + r.width / 2, r.y + r.height / 2]; })()`, b))(ctx, tg)
		if err != nil || len(pos) != 2 {
			return fmt.Errorf("the drop zone: %v", err)
		}
		data := &input.DragData{Files: paths, DragOperationsMask: 1}
		for _, ty := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := cdp.Call(ctx, tg, input.DispatchDragEvent, input.DispatchDragEventParams{Type: ty, X: pos[0], Y: pos[1], Data: data}); err != nil {
				return fmt.Errorf("%s: %w", ty, err)
			}
		}
		return nil
	}))
}

// chooseFile sets the file of the file input named label (what the file
// chooser its button opens would do).
func (p *studioPage) chooseFile(label string, f mediaFile) {
	p.t.Helper()
	b, _ := json.Marshal(label)
	p.step("choose "+f.name, studioWait, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{
			Expression: fmt.Sprintf(`document.querySelector("input[type=file][aria-label=" + JSON.stringify(%s) + "]")`, b)})
		if err != nil {
			return err
		}
		if res.Result == nil || res.Result.ObjectID == "" {
			return fmt.Errorf("no file input %s", label)
		}
		_, err = cdp.Call(ctx, tg, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{f.path}, ObjectID: res.Result.ObjectID})
		return err
	}))
}

// recordUploads makes the page keep a record of every upload request it
// sends (window.__up: method, extension, token, the File part's bytes and
// the outcome), to count what was sent and what was sent again.
func (p *studioPage) recordUploads() {
	p.t.Helper()
	studioEval[bool](p, `(() => {
		if (window.__up) return true;
		window.__up = []; const f = window.fetch;
		window.fetch = async (u, init) => {
			const url = String(u);
			if (!url.includes("/apis/cms/v1/fileUpload") || !(init && init.body instanceof FormData)) return f(u, init);
			const file = init.body.get("File");
			const rec = {method: init.method, ext: init.body.get("Extension"), token: url.includes("/fileUpload/") ? decodeURIComponent(url.split("/fileUpload/")[1]) : null,
				bytes: file ? file.size : -1, status: 0};
			window.__up.push(rec);
			try {
				const r = await f(u, init);
				rec.status = r.status;
				if (rec.method === "POST" && r.ok) rec.token = (await r.clone().json()).token || null;
				return r;
			} catch (e) { rec.error = String(e); throw e; }
		};
		return true;
	})()`)
}

// uploadRecord is one entry of window.__up.
type uploadRecord struct {
	Method string `json:"method"`
	Ext    string `json:"ext"`
	Token  string `json:"token"`
	Bytes  int64  `json:"bytes"`
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// uploadsOf are the recorded requests of the uploads with this extension.
func (p *studioPage) uploadsOf(ext string) []uploadRecord {
	p.t.Helper()
	var all []uploadRecord
	if err := json.Unmarshal([]byte(studioEval[string](p, `JSON.stringify(window.__up || [])`)), &all); err != nil {
		p.t.Fatal(err)
	}
	tokens := map[string]bool{}
	var out []uploadRecord
	for _, r := range all {
		if r.Method == "POST" && r.Ext == ext {
			if r.Token != "" {
				tokens[r.Token] = true
			}
			out = append(out, r)
		} else if r.Method == "PUT" && (tokens[r.Token] || tokens[r.Token+ext]) {
			out = append(out, r)
		}
	}
	return out
}

// gateMode is what the gate does with the browser's next chunk request.
type gateMode int

const (
	gatePass     gateMode = iota // send it
	gateHold                     // keep it until the page gives it up (Pause)
	gateLoseNext                 // pass `pass` more, then let the server answer the next and lose the answer; then down
	gateDown                     // the connection is down: every request fails
)

// uploadGate decides about every PUT /fileUpload/{token} the page sends
// (the chunks after the first, and the empty chunks that ask what the
// server holds).
type uploadGate struct {
	mu      sync.Mutex
	mode    gateMode
	pass    int
	held    int // requests held (gateHold)
	lost    int // answers lost after the server stored the chunk
	refused int // requests refused while down
}

func (g *uploadGate) set(m gateMode, pass int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mode, g.pass = m, pass
}

func (g *uploadGate) counts() (held, lost, refused int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held, g.lost, g.refused
}

// gateUploads intercepts the page's chunk requests (Fetch domain) and
// decides each by the gate's mode, until the test ends.
func (p *studioPage) gateUploads() *uploadGate {
	p.t.Helper()
	g := &uploadGate{}
	ctx, cancel := context.WithCancel(p.ctx)
	p.t.Cleanup(cancel)
	events := chromedp.Events(ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(p.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: "*/apis/cms/v1/fileUpload/*", RequestStage: fetch.RequestStageRequest},
	}}); err != nil {
		p.t.Fatalf("intercept uploads: %v", err)
	}
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			g.mu.Lock()
			var act func() error
			switch {
			case ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "":
				// The answer of the chunk the server stored: lost on the way back.
				g.lost++
				g.mode = gateDown
				act = func() error {
					_, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonConnectionReset})
					return err
				}
			case g.mode == gateHold:
				g.held++
				act = func() error { return nil } // never continued: the page aborts it
			case g.mode == gateDown:
				g.refused++
				act = func() error {
					_, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonInternetDisconnected})
					return err
				}
			case g.mode == gateLoseNext && g.pass == 0:
				yes := true
				act = func() error {
					_, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID, InterceptResponse: &yes})
					return err
				}
			default:
				if g.mode == gateLoseNext {
					g.pass--
				}
				act = func() error {
					_, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
					return err
				}
			}
			g.mu.Unlock()
			// A request the page gave up meanwhile is no longer known: nothing to do.
			_ = act()
		}
	}()
	return g
}

// stopGate ends the interception (the rest of the journey's requests go straight).
func (p *studioPage) stopGate() {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, fetch.Disable, cdp.Empty{}); err != nil {
		p.t.Fatalf("stop intercepting: %v", err)
	}
}

// allowDownloads saves the page's downloads into dir.
func (p *studioPage) allowDownloads(dir string) {
	p.t.Helper()
	params := browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}
	if c := chromedp.FromContext(p.ctx); c != nil {
		params.BrowserContextID = c.BrowserContextID
	}
	if _, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, params); err != nil {
		p.t.Fatalf("allow downloads: %v", err)
	}
}

// waitDownload waits until dir/name holds size bytes.
func waitDownload(t *testing.T, path string, size int64) []byte {
	t.Helper()
	deadline := time.Now().Add(studioWait)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && int64(len(b)) == size { //nolint:gosec // the test's own download directory
			return b
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no download %s of %d bytes", path, size)
	return nil
}

// heapUsage is the tab's JavaScript heap and the array buffers' storage, in bytes.
func (p *studioPage) heapUsage() (used, backing float64) {
	p.t.Helper()
	r, err := chromedp.Call(p.ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		p.t.Fatalf("heap usage: %v", err)
	}
	return r.UsedSize, r.BackingStorageSize
}

// runtimeHeap is Runtime.getHeapUsage (for a sampler off the test's goroutine).
var runtimeHeap = runtime.GetHeapUsage

// readFile reads a file of the test.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // the test's own temporary file
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitWithin is waitFor with a longer bound (a large upload).
func (p *studioPage) waitWithin(what, cond string, d time.Duration) {
	p.t.Helper()
	p.step(what, d, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))(ctx, tg)
		return err
	}))
}

// selectValue chooses value in the select with this aria-label, as a person's choice does (a change event).
func (p *studioPage) selectValue(label, value string) {
	p.t.Helper()
	l, _ := json.Marshal(label)
	v, _ := json.Marshal(value)
	p.step("choose "+value+" in "+label, studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector("select[aria-label=" + JSON.stringify(%s) + "]");
		el.value = %s; el.dispatchEvent(new Event("change", {bubbles: true})); })()`, l, v)))
}
