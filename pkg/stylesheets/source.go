package stylesheets

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// forbidden are constructs a stylesheet object's source may not contain
// (matched on the normalised source, see normalise): script URLs, legacy
// script hooks of old browsers, and markup that would end a <style>
// element the sheet is inlined into.
var forbidden = []string{
	"javascript:", "vbscript:", "livescript:", "data:text/html", "data:image/svg", "data:application",
	"expression(", "-moz-binding", "behavior:", "behaviour:", "</style", "<script", "<!--", "-->", "<![cdata[",
}

// Label names a construct Unsafe returned in words that are themselves
// harmless in a CSS comment (no markup, no scheme).
func Label(construct string) string {
	var b strings.Builder
	for _, r := range construct {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == ' ':
			b.WriteRune(r)
		default:
			b.WriteString(fmt.Sprintf("U+%04X", r))
		}
	}
	return b.String()
}

// Unsafe returns the first forbidden construct in a stylesheet object's
// source, or "" when there is none. Invalid UTF-8 and NUL count as
// unsafe. The check sees through CSS escapes (\6a avascript:), comments
// (java/**/script:) and whitespace, so an author cannot hide a construct
// from it.
func Unsafe(src string) string {
	if !utf8.ValidString(src) {
		return "invalid UTF-8"
	}
	if strings.IndexByte(src, 0) >= 0 {
		return "NUL character"
	}
	n := normalise(src)
	for _, f := range forbidden {
		if strings.Contains(n, f) {
			return f
		}
	}
	return ""
}

// normalise lower-cases src, decodes CSS escapes and drops comments and
// whitespace, for Unsafe's substring checks.
func normalise(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); {
		if strings.HasPrefix(src[i:], "/*") {
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				break
			}
			i += 2 + end + 2
			continue
		}
		c := src[i]
		if c == '\\' {
			j := i + 1
			for j < len(src) && j-i <= 6 && isHex(src[j]) {
				j++
			}
			if j > i+1 {
				v, _ := strconv.ParseUint(src[i+1:j], 16, 32)
				b.WriteRune(unicode.ToLower(rune(v))) //nolint:gosec // at most 6 hex digits
				i = j
				continue
			}
			if j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if r != '\n' {
					b.WriteRune(unicode.ToLower(r))
				}
				i = j + n
				continue
			}
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if !unicode.IsSpace(r) {
			b.WriteRune(unicode.ToLower(r))
		}
		i += n
	}
	return b.String()
}
