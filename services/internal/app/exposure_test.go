package app

import (
	"net/http"
	"strings"
)

// runExposureScenario: no uploaded file runs as a page on the API's origin.
// Every file answer of the three groups says nosniff; HTML, SVG, XML,
// JavaScript and files of unknown type are downloads under a sandboxing
// Content-Security-Policy, on a full read, a range and a 304 alike; images
// and plain text stay inline.
func runExposureScenario(c filesClient) {
	c.t.Helper()
	for _, f := range []struct {
		ext, body string
		active    bool
	}{
		{".html", `<script>fetch("/apis/cms/v1/users/admin")</script>`, true},
		{".htm", `<script>alert(1)</script>`, true},
		{".svg", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, true},
		{".xml", `<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>`, true},
		{".js", `alert(1)`, true},
		{".bin", `<html><script>alert(1)</script></html>`, true},
		{".png", "\x89PNG\r\n\x1a\n not really an image", false},
		{".txt", `<script>alert(1)</script> as text`, false},
	} {
		r := c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, []byte(f.body), "Extension", f.ext, "Commit", "true")
		name := *r.GUID + f.ext
		paths := []string{"/apis/cms/v1/files/" + name, "/delivery/api/files/" + name, "/apis/rendering/v1/files/" + name}
		if f.ext == ".bin" { // the binaries route serves application/octet-stream
			paths = append(paths, "/apis/rendering/v1/binaries/"+*r.GUID)
		}
		for _, path := range paths {
			for _, req := range []struct {
				status int
				hdr    []string
			}{{http.StatusOK, nil}, {http.StatusPartialContent, []string{"Range", "bytes=0-3"}}} {
				resp, _ := c.get(path, req.status, req.hdr...)
				checkExposure(c, path, resp, f.active)
				resp, _ = c.get(path, http.StatusNotModified, "If-None-Match", resp.Header.Get("ETag"))
				checkExposure(c, path+" (304)", resp, f.active)
			}
		}
	}
}

func checkExposure(c filesClient, what string, resp *http.Response, active bool) {
	c.t.Helper()
	h := resp.Header
	if h.Get("X-Content-Type-Options") != "nosniff" {
		c.t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, h.Get("X-Content-Type-Options"))
	}
	csp, disp := h.Get("Content-Security-Policy"), h.Get("Content-Disposition")
	if active && (!strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") || !strings.HasPrefix(disp, "attachment")) {
		c.t.Errorf("%s (%s): Content-Security-Policy %q, Content-Disposition %q: an active file must be a sandboxed download", what, h.Get("Content-Type"), csp, disp)
	}
	if !active && (csp != "" || disp != "") {
		c.t.Errorf("%s (%s): Content-Security-Policy %q, Content-Disposition %q: a passive file stays inline", what, h.Get("Content-Type"), csp, disp)
	}
}
