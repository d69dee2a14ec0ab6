package blobs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 1024

// ValidateKey reports whether key is a valid blob key, wrapping
// ErrInvalidKey when it is not. A key is a relative, slash-separated path of
// non-empty segments: valid UTF-8, at most MaxKeyLen bytes, no leading or
// trailing slash, no empty, "." or ".." segment, no backslash and no
// control characters (NUL included). Keys are case-sensitive.
//
// Every Store implementation calls it first, so a key that is valid for one
// backend is valid for all, and no key can address anything outside a
// store's root.
func ValidateKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q: %s", ErrInvalidKey, truncate(key), why)
	}
	switch {
	case key == "":
		return bad("empty")
	case len(key) > MaxKeyLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	case strings.HasPrefix(key, "/"):
		return bad("absolute")
	case strings.ContainsRune(key, '\\'):
		return bad("backslash")
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return bad("control character")
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("empty segment")
		case ".", "..":
			return bad("relative segment " + seg)
		}
	}
	return nil
}

func truncate(s string) string { return errkind.Clip(s, 64) }
