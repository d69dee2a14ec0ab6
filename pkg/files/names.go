package files

import (
	"crypto/md5" //nolint:gosec // MD5 is the content address of NovaDB's file names, not a security measure
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/model"
)

// MaxExtensionLen is the longest file extension accepted, the dot included.
const MaxExtensionLen = 32

// maxNameLen bounds a file name: a GUID (36) plus the longest extension.
const maxNameLen = 36 + MaxExtensionLen

// Name is a parsed file name "{guid}{ext}": the content's MD5 and an
// extension ("" or "." followed by letters, digits, '-' or '_').
type Name struct {
	MD5 [md5.Size]byte
	Ext string
}

// GUID is the MD5 in GUID form: the 32 lower-case hex digits of the digest
// in byte order, grouped 8-4-4-4-12.
func (n Name) GUID() string { return GUID(n.MD5) }

// Hex is the MD5 as 32 lower-case hex digits.
func (n Name) Hex() string { return hex.EncodeToString(n.MD5[:]) }

// String is the canonical file name: GUID form plus extension.
func (n Name) String() string { return n.GUID() + n.Ext }

// GUID formats an MD5 digest in GUID form (byte order, lower case).
func GUID(sum [md5.Size]byte) string {
	h := hex.EncodeToString(sum[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ParseName parses a file name: an MD5 in GUID form (36 characters, with
// dashes) or as 32 hex digits, either case, followed by an optional
// extension. Anything else (path separators, "..", NUL, over-long names)
// is ErrInvalidName; a name never reaches a file system.
func ParseName(name string) (Name, error) {
	bad := func(why string) (Name, error) {
		return Name{}, fmt.Errorf("%w: %q: %s", ErrInvalidName, clip(name), why)
	}
	if len(name) > maxNameLen {
		return bad(fmt.Sprintf("longer than %d bytes", maxNameLen))
	}
	var sum [md5.Size]byte
	rest, ok := parseDigest(name, &sum)
	if !ok {
		return bad("does not start with an MD5 in GUID or 32-hex form")
	}
	ext, err := NormalizeExtension(rest, false)
	if err != nil {
		return bad(err.Error())
	}
	return Name{MD5: sum, Ext: ext}, nil
}

// ParseMD5 parses an MD5 in GUID form or as 32 hex digits, nothing after it.
func ParseMD5(s string) ([md5.Size]byte, error) {
	var sum [md5.Size]byte
	rest, ok := parseDigest(s, &sum)
	if !ok || rest != "" {
		return sum, fmt.Errorf("%w: %q is not an MD5 in GUID or 32-hex form", ErrInvalidName, clip(s))
	}
	return sum, nil
}

// parseDigest reads a GUID-form or 32-hex digest at the start of s and
// returns what follows it.
func parseDigest(s string, sum *[md5.Size]byte) (string, bool) {
	var digits string
	switch {
	case len(s) >= 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-':
		digits, s = s[:8]+s[9:13]+s[14:18]+s[19:23]+s[24:36], s[36:]
	case len(s) >= 32:
		digits, s = s[:32], s[32:]
	default:
		return "", false
	}
	if _, err := hex.Decode(sum[:], []byte(digits)); err != nil {
		return "", false
	}
	return s, true
}

// NormalizeExtension returns ext with a leading dot (added when missing if
// addDot) and checks it: at most MaxExtensionLen bytes, then only ASCII
// letters, digits, '-', '_' and inner dots ("tar.gz"). "" stays "".
func NormalizeExtension(ext string, addDot bool) (string, error) {
	if ext == "" {
		return "", nil
	}
	if addDot && !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	if len(ext) > MaxExtensionLen {
		return "", fmt.Errorf("extension longer than %d bytes", MaxExtensionLen)
	}
	if ext[0] != '.' || len(ext) == 1 || ext[len(ext)-1] == '.' {
		return "", fmt.Errorf("extension %q must be a dot followed by letters or digits", clip(ext))
	}
	for i := 1; i < len(ext); i++ {
		c := ext[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' ||
			c == '.' && ext[i-1] != '.'
		if !ok {
			return "", fmt.Errorf("extension %q may hold only letters, digits, '-', '_' and single inner dots", clip(ext))
		}
	}
	return ext, nil
}

// ContentType is the media type served for an extension (the built-in
// table of model.MediaTypes, the same on every host);
// application/octet-stream when unknown.
func ContentType(ext string) string { return model.ContentType(ext) }

// ProxyName is the file a binary proxy object names with its hash (GUID or
// 32-hex form) and extension (with or without the dot) values. Values that
// name no valid file are ErrNotFound: the object has no servable file.
func ProxyName(hash, ext string) (Name, error) {
	sum, err := ParseMD5(strings.TrimSpace(hash))
	if err != nil {
		return Name{}, fmt.Errorf("%w: file hash %q", ErrNotFound, clip(hash))
	}
	e, err := NormalizeExtension(strings.TrimSpace(ext), true)
	if err != nil {
		return Name{}, fmt.Errorf("%w: file extension %q", ErrNotFound, clip(ext))
	}
	return Name{MD5: sum, Ext: e}, nil
}

// clip shortens quoted input in error messages (the caller formats with %q).
func clip(s string) string { return errkind.Clip(s, 80) }
