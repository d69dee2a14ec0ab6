package content

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/params"
)

// IdentKind tells how an identifier string is read.
type IdentKind int

// Identifier kinds.
const (
	IdentInvalid IdentKind = iota
	// IdentID is a numeric object id.
	IdentID
	// IdentGUID is GUID-shaped. A GUID-shaped string may also be an
	// ApiIdentifier (e.g. "a0b1…-…"), so both are looked up; two different
	// objects matching is ErrAmbiguous.
	IdentGUID
	// IdentAPI is an ApiIdentifier.
	IdentAPI
)

// Ident is a parsed identifier.
type Ident struct {
	Kind IdentKind
	ID   int64  // IdentID
	GUID string // IdentGUID: normalised (lower case, no braces)
	Raw  string // the trimmed input, the ApiIdentifier candidate
}

// maxIdentLen bounds identifiers (and ApiIdentifiers).
const maxIdentLen = 256

// ParseIdent reads "42" (plain decimal digits, params.ID: no sign, no
// spaces), a GUID ("{…}" and upper case accepted) or an ApiIdentifier. An
// empty string, surrounding spaces ("4 " is not branch 4), a signed or
// out-of-range number, or text that cannot be an ApiIdentifier is
// ErrInvalid. Lists are split and trimmed by SplitIdents first.
func ParseIdent(s string) (Ident, error) {
	if s == "" {
		return Ident{}, invalidf("empty identifier")
	}
	if len(s) > maxIdentLen {
		return Ident{}, invalidf("identifier longer than %d characters", maxIdentLen)
	}
	if strings.TrimSpace(s) != s {
		return Ident{}, invalidf("identifier %q has leading or trailing spaces: an id is plain digits, else a GUID or an ApiIdentifier", s)
	}
	if id, ok := params.ID(s); ok {
		return Ident{Kind: IdentID, ID: id, Raw: s}, nil
	}
	if g, ok := normalizeGUID(s); ok {
		return Ident{Kind: IdentGUID, GUID: g, Raw: s}, nil
	}
	if err := checkAPIIdentifier(s); err != nil {
		return Ident{}, invalidf("%q is neither an id (plain digits up to 2147483647), a GUID nor an ApiIdentifier", s)
	}
	return Ident{Kind: IdentAPI, Raw: s}, nil
}

// SplitIdents splits a comma-separated list ("1000, attributeName,4000"),
// trimming spaces and skipping empty items.
func SplitIdents(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkAPIIdentifier: a letter or '_' first, then letters, digits, '_', '.'
// or '-'. So it can never be read as a number, and commas (list separators)
// and spaces are excluded.
func checkAPIIdentifier(s string) error {
	if s == "" || len(s) > maxIdentLen {
		return invalidf("ApiIdentifier must have 1 to %d characters", maxIdentLen)
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if letter || (i > 0 && (c == '.' || c == '-' || (c >= '0' && c <= '9'))) {
			continue
		}
		return invalidf("ApiIdentifier %q: character %q not allowed at %d", s, c, i)
	}
	return nil
}

// normalizeGUID accepts 8-4-4-4-12 hex (optionally in braces) and the
// 32-hex form, returning the lower-case dashed form.
func normalizeGUID(s string) (string, bool) {
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	var hex string
	switch len(s) {
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		hex = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	case 32:
		hex = s
	default:
		return "", false
	}
	for _, c := range hex {
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
			return "", false
		}
	}
	h := strings.ToLower(hex)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

// newGUID returns a random (version 4) GUID.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
