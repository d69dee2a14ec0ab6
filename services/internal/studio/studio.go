// Package studio serves the studio, the browser editor, at /studio/ from
// the assets embedded in the binary (built from studio/ by `make studio`,
// committed, checked for drift in CI): hashed assets with immutable
// caching, the page for every other path under /studio/ (the studio's
// addresses are its state), a strict Content-Security-Policy (no inline
// script or style, nothing from elsewhere) and gzip for clients that take
// it. The studio is a client of the public API on the same origin; this
// handler serves files only and needs no credentials.
package studio

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/etag"
)

// Path is where the studio is served.
const Path = "/studio/"

// ContentSecurityPolicy is sent with every studio answer: scripts, styles,
// connections and frames only from the origin, no inline code, no plugins,
// not framed elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; frame-src 'self'; worker-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Manifest is what build.mjs records: the entry, what the first load
// fetches, and the chunks loaded on demand (paths relative to dist).
type Manifest struct {
	Entry   string   `json:"entry"`
	Initial []string `json:"initial"`
	Lazy    []string `json:"lazy"`
}

// file is one asset, with its gzip form when that is smaller.
type file struct {
	body, gz    []byte
	contentType string
	etag        string
}

// Handler serves the embedded studio.
type Handler struct {
	files    map[string]*file
	page     *file
	manifest Manifest
}

// New loads the embedded assets (and compresses them once). A binary
// built with the tag nostudio has none: New fails, and the server serves
// no studio.
func New() (*Handler, error) {
	if !embedded {
		return nil, ErrNotBuiltIn
	}
	return newHandler(dist)
}

// ErrNotBuiltIn is New's error in a binary built without the studio (tag nostudio).
var ErrNotBuiltIn = errors.New("studio: not built into this binary (tag nostudio)")

func newHandler(fsys fs.FS) (*Handler, error) {
	root, err := fs.Sub(fsys, "dist")
	if err != nil {
		return nil, err
	}
	h := &Handler{files: map[string]*file{}}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		f, err := load(p, b)
		if err != nil {
			return err
		}
		h.files[p] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.page = h.files["index.html"]
	if h.page == nil {
		return nil, fmt.Errorf("studio: the build has no index.html (run make studio)")
	}
	mf, ok := h.files["manifest.json"]
	if !ok {
		return nil, fmt.Errorf("studio: the build has no manifest.json (run make studio)")
	}
	if err := json.Unmarshal(mf.body, &h.manifest); err != nil {
		return nil, fmt.Errorf("studio: manifest.json: %w", err)
	}
	return h, nil
}

func load(name string, b []byte) (*file, error) {
	f := &file{body: b, etag: etag.Of("studio", b, nil)}
	f.contentType = mime.TypeByExtension(path.Ext(name))
	if f.contentType == "" {
		f.contentType = "application/octet-stream"
	}
	if strings.HasPrefix(f.contentType, "text/") || strings.Contains(f.contentType, "javascript") ||
		strings.Contains(f.contentType, "json") || strings.HasSuffix(name, ".svg") {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(b); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		if buf.Len() < len(b) {
			f.gz = buf.Bytes()
		}
	}
	return f, nil
}

// Manifest is the build's manifest.
func (h *Handler) Manifest() Manifest { return h.manifest }

// CompressedSize is the number of bytes a client that takes gzip receives
// for one asset (relative to dist); false if there is none.
func (h *Handler) CompressedSize(name string) (int, bool) {
	f, ok := h.files[name]
	if !ok {
		return 0, false
	}
	if f.gz != nil {
		return len(f.gz), true
	}
	return len(f.body), true
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == strings.TrimSuffix(Path, "/") {
		http.Redirect(w, r, Path, http.StatusMovedPermanently)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, Path)
	if strings.HasPrefix(rel, "assets/") {
		f, ok := h.files[rel]
		if !ok {
			http.NotFound(w, r)
			return
		}
		// The name carries the content's hash: it never changes.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.write(w, r, f)
		return
	}
	// Every other address is a view of the studio: the page decides.
	hd.Set("Cache-Control", "no-cache")
	h.write(w, r, h.page)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, f *file) {
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	hd.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && etag.Matches(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		hd.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip: the Accept-Encoding names gzip with a quality above 0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				q, err := strconv.ParseFloat(v, 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}
