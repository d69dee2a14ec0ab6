package studio

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func handler(t *testing.T) *Handler {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStudioPage: every address under /studio/ is the page, not cached
// without revalidation, under the strict policy; hashed assets are cached
// for good; a HEAD has no body; anything but GET and HEAD is refused.
func TestStudioPage(t *testing.T) {
	h := handler(t)
	for _, p := range []string{"/studio/", "/studio/b/4/content/article/12?lang=201", "/studio/login"} {
		r := get(t, h, http.MethodGet, p)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`<div id="app">`)) {
			t.Fatalf("GET %s = %d: %.200s", p, r.StatusCode, body)
		}
		if got := r.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s Cache-Control = %q, want no-cache", p, got)
		}
		if got := r.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("GET %s CSP = %q", p, got)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", p, r.Header)
		}
	}
	if r := get(t, h, http.MethodGet, "/studio"); r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "/studio/" {
		t.Errorf("GET /studio = %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if r := get(t, h, http.MethodPost, "/studio/"); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /studio/ = %d, want 405", r.StatusCode)
	}
	if r := get(t, h, http.MethodGet, "/studio/assets/nothing-ABC.js"); r.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown asset = %d, want 404", r.StatusCode)
	}
	r := get(t, h, http.MethodHead, "/studio/")
	if b, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusOK || len(b) != 0 {
		t.Errorf("HEAD /studio/ = %d with %d bytes", r.StatusCode, len(b))
	}
}

// TestStudioPolicy: the policy forbids inline script and style and every
// other origin, and the page needs nothing it forbids (no inline script or
// style, every script and stylesheet from /studio/assets/).
func TestStudioPolicy(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("the policy lacks %q", want)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe") || strings.Contains(ContentSecurityPolicy, "*") {
		t.Errorf("the policy allows unsafe sources: %s", ContentSecurityPolicy)
	}
	page := string(handler(t).page.body)
	scripts := regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) == 0 {
		t.Fatal("the page has no script")
	}
	for _, s := range scripts {
		if strings.TrimSpace(s[2]) != "" || !regexp.MustCompile(`src="/studio/assets/[^"]+\.js"`).MatchString(s[1]) {
			t.Errorf("an inline or foreign script: %s", s[0])
		}
	}
	if regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`).MatchString(page) {
		t.Errorf("the page has inline style or an event handler attribute:\n%s", page)
	}
}

// TestStudioAssets: what the page and the manifest name exists; hashed
// assets are immutable, revalidate with their ETag, and travel gzipped to
// a client that takes gzip.
func TestStudioAssets(t *testing.T) {
	h := handler(t)
	m := h.Manifest()
	if m.Entry == "" || len(m.Initial) == 0 {
		t.Fatalf("manifest %+v", m)
	}
	for _, ref := range regexp.MustCompile(`(?:src|href)="/studio/([^"]+)"`).FindAllStringSubmatch(string(h.page.body), -1) {
		if _, ok := h.files[ref[1]]; !ok {
			t.Errorf("the page names %s, which is not built", ref[1])
		}
	}
	for _, name := range append(append([]string{}, m.Initial...), m.Lazy...) {
		if !regexp.MustCompile(`^assets/[A-Za-z0-9_-]+-[A-Z0-9]{8}\.(js|css)$`).MatchString(name) {
			t.Errorf("asset %s has no content hash in its name", name)
		}
		r := get(t, h, http.MethodGet, "/studio/"+name, "Accept-Encoding", "gzip, br")
		if r.StatusCode != http.StatusOK || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s = %d, Cache-Control %q", name, r.StatusCode, r.Header.Get("Cache-Control"))
		}
		if r.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("GET %s with gzip accepted: Content-Encoding %q", name, r.Header.Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		if !bytes.Equal(plain, h.files[name].body) {
			t.Errorf("GET %s: the gzip body is not the asset", name)
		}
		if r2 := get(t, h, http.MethodGet, "/studio/"+name, "If-None-Match", r.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match = %d, want 304", name, r2.StatusCode)
		}
		if r3 := get(t, h, http.MethodGet, "/studio/"+name, "Accept-Encoding", "gzip;q=0"); r3.Header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s with gzip;q=0: Content-Encoding %q", name, r3.Header.Get("Content-Encoding"))
		}
	}
}

// firstLoadBudget is the most the first load may transfer (JS and CSS,
// compressed), the studio's budget.
const firstLoadBudget = 300 * 1024

// TestStudioFirstLoadBudget: the page's first load (the entry, its static
// imports and its CSS, as sent gzipped) stays within firstLoadBudget.
func TestStudioFirstLoadBudget(t *testing.T) {
	h := handler(t)
	total := 0
	for _, name := range h.Manifest().Initial {
		n, ok := h.CompressedSize(name)
		if !ok {
			t.Fatalf("the manifest names %s, which is not built", name)
		}
		total += n
	}
	lazy := 0
	for _, name := range h.Manifest().Lazy {
		n, _ := h.CompressedSize(name)
		lazy += n
	}
	t.Logf("first load: %d files, %.1f kB compressed (budget %d kB); loaded on demand: %d files, %.1f kB",
		len(h.Manifest().Initial), float64(total)/1024, firstLoadBudget/1024, len(h.Manifest().Lazy), float64(lazy)/1024)
	if total > firstLoadBudget {
		t.Errorf("the first load is %d bytes compressed, over the budget of %d", total, firstLoadBudget)
	}
}
