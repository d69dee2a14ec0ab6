// Package etag computes and compares the strong entity tags the read
// groups answer with (Delivery's response cache, Rendering's templates and
// stylesheets, the gateway's conditional requests): one rule, in no
// group's package.
package etag

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Of is a strong validator of one answer: the first 16 bytes of the
// SHA-256 of the operation op, the body and the tags (the cache tags of
// what it was built from, or what it was built for), base64url (22
// characters, like meta.etag), quoted. Equal answers get equal tags on
// every replica.
func Of(op string, body []byte, tags []string) string {
	h := sha256.New()
	h.Write([]byte(op + "\x00"))
	h.Write(body)
	h.Write([]byte("\x00" + strings.Join(tags, "\n")))
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// Matches implements the weak comparison of If-None-Match (RFC 9110
// 13.1.2): header is a list of tags, W/ is ignored, "*" matches anything.
func Matches(header, tag string) bool {
	for c := range strings.SplitSeq(header, ",") {
		c = strings.TrimPrefix(strings.TrimSpace(c), "W/")
		if c == "*" || c == tag {
			return true
		}
	}
	return false
}
