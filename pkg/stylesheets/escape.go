package stylesheets

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Value rules: every value that reaches a stylesheet built from objects is
// either validated against a closed grammar (identifiers, numbers,
// colours, keywords) or written as a quoted CSS string in which every
// character but ASCII letters, digits, space and non-ASCII letters is a
// CSS escape. Nothing a value holds can end a string, a declaration or a
// rule (no raw " ' \ ; { } < > ( ) : or line break reaches the output).

// MaxStringRunes bounds a quoted string (a font family name, a URL).
const MaxStringRunes = 256

// Quote returns s as a double-quoted CSS string. Letters, digits and
// space pass; every other character is written as \HHHHHH (six hex
// digits, so no following character can extend the escape). Invalid
// UTF-8 and NUL become U+FFFD, as CSS itself reads them.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escaped := false // the last thing written was an escape
	for _, r := range s {
		if r == 0 {
			r = utf8.RuneError
		}
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ' '):
			if r == ' ' && escaped {
				// CSS consumes one space after a hex escape: write it
				// as the escape's terminator, then the real space.
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			escaped = false
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
			b.WriteRune(r)
			escaped = false
		default:
			fmt.Fprintf(&b, "\\%06x", r)
			escaped = true
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Unquote reverses Quote (and reads any CSS string of that form: "..."
// with \-escapes). It exists for tests and tools.
func Unquote(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	in := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(in); {
		c := in[i]
		if c == '"' || c == '\n' {
			return "", false
		}
		if c != '\\' {
			r, n := utf8.DecodeRuneInString(in[i:])
			b.WriteRune(r)
			i += n
			continue
		}
		j := i + 1
		for j < len(in) && j-i <= 6 && isHex(in[j]) {
			j++
		}
		if j == i+1 {
			if j >= len(in) {
				return "", false
			}
			r, n := utf8.DecodeRuneInString(in[j:])
			b.WriteRune(r)
			i = j + n
			continue
		}
		v, _ := strconv.ParseUint(in[i+1:j], 16, 32)
		b.WriteRune(rune(v)) //nolint:gosec // at most 6 hex digits
		if j < len(in) && in[j] == ' ' {
			j++
		}
		i = j
	}
	return b.String(), true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// Ident validates a CSS identifier (a class name): an ASCII letter or _
// first, then letters, digits, _ and -; at most 128 characters.
func Ident(s string) (string, bool) {
	if s == "" || len(s) > 128 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '-')) {
			return "", false
		}
	}
	return s, true
}

// Number formats a finite number within [lo, hi] without exponent, with
// unit appended (a fixed unit from this package, never from content).
func Number(f float64, lo, hi float64, unit string) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < lo || f > hi {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64) + unit, true
}

// Color validates an RGB colour: #rgb, #rrggbb or #rrggbbaa (the # may be
// missing, as String.RGBColor values often are). The answer has the #.
func Color(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) != 3 && len(s) != 6 && len(s) != 8 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return "", false
		}
	}
	return "#" + strings.ToLower(s), true
}

// Keyword returns s lower-cased when it is one of allowed.
func Keyword(s string, allowed ...string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	return "", false
}

// Comment returns s as the text of a CSS comment: "*/" cannot occur and
// only printable ASCII is kept.
func Comment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= ' ' && r < 0x7f && r != '*' && r != '<' && r != '>' {
			b.WriteRune(r)
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
