package hyphenate

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/errkind"
	"golang.org/x/net/html"
)

// Limits of HTML.
const (
	// MaxInputBytes is the largest HTML HTML hyphenates (4 MiB); larger
	// input is refused with errkind.TooLarge before anything is written.
	MaxInputBytes = 4 << 20
	// MinWordRunes is the shortest word that is hyphenated.
	MinWordRunes = 5
	// MaxWordRunes is the longest: longer letter runs (hashes, run-on
	// strings) stay unchanged, which also bounds the work per word.
	MaxWordRunes = 64
)

// SoftHyphen is U+00AD, the invisible break opportunity browsers honour.
const SoftHyphen = "\u00AD"

// skipped elements keep their content unchanged: preformatted or code
// text, raw text (script, style) and text that is not prose.
var skipped = map[string]bool{
	"pre": true, "code": true, "kbd": true, "samp": true, "var": true, "tt": true,
	"script": true, "style": true, "textarea": true, "title": true,
	"svg": true, "math": true, "template": true, "noscript": true, "xmp": true, "plaintext": true,
}

// HTML writes src to w with soft hyphens inserted into the words of its
// text nodes, using the patterns for lang (ForLanguage). An unknown
// language writes src unchanged. Every byte of src is written in order;
// the output minus the inserted U+00AD equals src.
func HTML(w io.Writer, src string, lang string) error {
	if len(src) > MaxInputBytes {
		return errkind.New(errkind.TooLarge, fmt.Sprintf("hyphenation input is %d bytes, the limit is %d", len(src), MaxInputBytes))
	}
	p := ForLanguage(lang)
	if p == nil {
		_, err := io.WriteString(w, src)
		return err
	}
	z := html.NewTokenizer(strings.NewReader(src))
	depth := 0 // open skipped elements
	for {
		tt := z.Next()
		raw := z.Raw()
		if tt == html.ErrorToken {
			// At EOF an unfinished tag or comment is left in raw.
			if _, err := w.Write(raw); err != nil {
				return err
			}
			if z.Err() == io.EOF {
				return nil
			}
			return z.Err()
		}
		switch tt {
		case html.StartTagToken:
			if name, _ := z.TagName(); skipped[string(name)] {
				depth++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); skipped[string(name)] && depth > 0 {
				depth--
			}
		case html.TextToken:
			if depth == 0 {
				if _, err := io.WriteString(w, Text(p, string(raw))); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
}

// String is HTML into a string.
func String(src, lang string) (string, error) {
	var b bytes.Buffer
	b.Grow(len(src) + len(src)/8)
	if err := HTML(&b, src, lang); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Text hyphenates raw HTML text (entity references stay as they are):
// whitespace-separated chunks that look like URLs, e-mail addresses, paths
// or identifiers, or already carry a soft hyphen, are kept; in the others
// each run of letters between MinWordRunes and MaxWordRunes long, not
// touching a digit, gets soft hyphens at its pattern points.
func Text(p *Patterns, raw string) string {
	var b strings.Builder
	b.Grow(len(raw) + len(raw)/8)
	i := 0
	for i < len(raw) {
		// whitespace passes through
		j := i
		for j < len(raw) && isSpace(raw[j]) {
			j++
		}
		b.WriteString(raw[i:j])
		i = j
		for j < len(raw) && !isSpace(raw[j]) {
			j++
		}
		chunk := raw[i:j]
		if keepChunk(chunk) {
			b.WriteString(chunk)
		} else {
			hyphenateChunk(&b, p, chunk)
		}
		i = j
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// keepChunk reports chunks that are not prose.
func keepChunk(c string) bool {
	if strings.ContainsAny(c, "@/\\_=<>{}|~#") || strings.Contains(c, SoftHyphen) || strings.Contains(c, "&shy;") ||
		strings.Contains(c, "&#173;") || strings.Contains(c, "&#xad;") || strings.Contains(c, "&#xAD;") ||
		strings.HasPrefix(strings.ToLower(c), "www.") {
		return true
	}
	// a dot or colon between two letters: example.com, mailto:x, a.b.c
	for k := 1; k+1 < len(c); k++ {
		if (c[k] == '.' || c[k] == ':') && isASCIIAlnum(c[k-1]) && isASCIIAlnum(c[k+1]) {
			return true
		}
	}
	return false
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// hyphenateChunk writes chunk with its letter runs hyphenated. An entity
// reference (&name; or &#n;) is copied whole and ends a run.
func hyphenateChunk(b *strings.Builder, p *Patterns, chunk string) {
	i := 0
	for i < len(chunk) {
		if chunk[i] == '&' {
			j := i + 1
			for j < len(chunk) && j-i < 40 && (isASCIIAlnum(chunk[j]) || chunk[j] == '#') {
				j++
			}
			if j < len(chunk) && chunk[j] == ';' {
				j++
			}
			b.WriteString(chunk[i:j])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(chunk[i:])
		if !unicode.IsLetter(r) {
			b.WriteString(chunk[i : i+size])
			i += size
			continue
		}
		j := i
		var word []rune
		for j < len(chunk) {
			r, size := utf8.DecodeRuneInString(chunk[j:])
			if !unicode.IsLetter(r) {
				break
			}
			word = append(word, r)
			j += size
		}
		prevDigit := i > 0 && isDigitByte(chunk[i-1])
		nextDigit := j < len(chunk) && isDigitByte(chunk[j])
		if len(word) < MinWordRunes || len(word) > MaxWordRunes || prevDigit || nextDigit || (i > 0 && chunk[i-1] == '&') {
			b.WriteString(chunk[i:j])
		} else {
			last := 0
			for _, k := range p.Points(word) {
				b.WriteString(string(word[last:k]))
				b.WriteString(SoftHyphen)
				last = k
			}
			b.WriteString(string(word[last:]))
		}
		i = j
	}
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
