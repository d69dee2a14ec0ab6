package files

import "strings"

// What a browser may do with a stored file served from the API's origin.
// Files are user-supplied: one that a browser would run (HTML, SVG, XML,
// JavaScript, anything of unknown type) must never execute with the
// origin's authority, or whoever uploads it acts as whoever opens its link.
// So every file answer says nosniff (the browser keeps to the declared
// type), and an active one is a download (Content-Disposition: attachment)
// under a sandboxing Content-Security-Policy that blocks scripts, should a
// browser display it anyway. Passive media (images but SVG, audio, video,
// fonts, PDF, plain text, CSS, JSON, archives, office documents) stay
// inline, so pages and editors can show them.

// ActiveContentPolicy is the Content-Security-Policy of an active file.
const ActiveContentPolicy = "sandbox; default-src 'none'"

// passiveTypes are the media types served inline.
var passiveTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true, "image/x-icon": true,
	"image/bmp": true, "image/tiff": true, "image/avif": true,
	"application/pdf": true, "application/zip": true, "application/gzip": true, "application/json": true,
	"text/css": true, "text/plain": true, "text/csv": true, "text/markdown": true, "text/vtt": true,
	"application/msword": true, "application/vnd.ms-excel": true, "application/vnd.ms-powerpoint": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         true,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
}

// Active reports whether a browser could run content of contentType as a
// document with scripts: everything but the passive types, audio, video
// and fonts.
func Active(contentType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mt = strings.TrimSpace(mt)
	if passiveTypes[mt] {
		return false
	}
	for _, prefix := range []string{"audio/", "video/", "font/"} {
		if strings.HasPrefix(mt, prefix) {
			return false
		}
	}
	return true
}

// ExposureHeaders are the header pairs (lower-case names) of an answer
// serving a file of contentType: nosniff always; for an active type a
// download under ActiveContentPolicy.
func ExposureHeaders(contentType string) []string {
	h := []string{"x-content-type-options", "nosniff"}
	if Active(contentType) {
		h = append(h, "content-security-policy", ActiveContentPolicy, "content-disposition", "attachment")
	}
	return h
}
