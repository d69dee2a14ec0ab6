// Package hyphenate inserts soft hyphens (U+00AD) into the text of HTML
// with Frank Liang's pattern algorithm (the one TeX uses) and the
// hyph-utf8 / LibreOffice pattern files shipped in patterns/ (licences in
// patterns/NOTICE.md). Only text nodes are touched: never tags,
// attributes, comments, URL- or e-mail-like words, or the content of
// pre, code, script, style and similar elements.
package hyphenate

import (
	"bufio"
	"bytes"
	"embed"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:embed patterns/hyph-de-1996.pat.txt patterns/hyph_en_US.dic patterns/hyph_en_GB.dic
var patternFiles embed.FS

// Patterns is one language's compiled pattern set.
type Patterns struct {
	// values maps a pattern's letters to its inter-letter values
	// (len(letters)+1 entries).
	values map[string][]uint8
	// more holds every proper prefix of a pattern's letters: a match
	// attempt stops as soon as the letters read are no such prefix.
	more     map[string]struct{}
	maxLen   int // longest pattern, in runes
	leftMin  int // fewest runes before the first hyphen
	rightMin int // fewest runes after the last hyphen
}

// ParsePatterns reads a pattern file: one Liang pattern per line or
// whitespace-separated ("a1b", ".ab3a", "4ß1"), lines starting with % or #
// are comments, and the LibreOffice header lines (the charset name,
// LEFTHYPHENMIN n, RIGHTHYPHENMIN n, other upper-case keywords) set the
// minimums or are skipped. leftMin and rightMin are the defaults when the
// file does not set them.
func ParsePatterns(data []byte, leftMin, rightMin int) *Patterns {
	p := &Patterns{values: make(map[string][]uint8), more: make(map[string]struct{}), leftMin: leftMin, rightMin: rightMin}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '%' || line[0] == '#' {
			continue
		}
		if f := strings.Fields(line); len(f) >= 1 && isKeyword(f[0]) {
			if len(f) == 2 {
				n, err := strconv.Atoi(f[1])
				if err == nil && n > 0 && n < 10 {
					switch f[0] {
					case "LEFTHYPHENMIN":
						p.leftMin = n
					case "RIGHTHYPHENMIN":
						p.rightMin = n
					}
				}
			}
			continue
		}
		for _, pat := range strings.Fields(line) {
			p.add(pat)
		}
	}
	return p
}

// isKeyword reports a header line word: upper-case ASCII letters, digits,
// '-' and '_' only (UTF-8, ISO8859-1, LEFTHYPHENMIN ...).
func isKeyword(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != "" && s[0] >= 'A' && s[0] <= 'Z'
}

func (p *Patterns) add(pat string) {
	var letters []rune
	vals := []uint8{0}
	for _, r := range pat {
		if r >= '0' && r <= '9' {
			vals[len(vals)-1] = uint8(r - '0')
			continue
		}
		letters = append(letters, unicode.ToLower(r))
		vals = append(vals, 0)
	}
	if len(letters) == 0 {
		return
	}
	p.values[string(letters)] = vals
	for k := 1; k < len(letters); k++ {
		p.more[string(letters[:k])] = struct{}{}
	}
	if len(letters) > p.maxLen {
		p.maxLen = len(letters)
	}
}

// Len is the number of patterns.
func (p *Patterns) Len() int { return len(p.values) }

// Points returns the rune offsets inside word (1..len-1) where a hyphen
// may go, honouring the minimums; word is matched lower-cased.
func (p *Patterns) Points(word []rune) []int {
	n := len(word)
	if n < p.leftMin+p.rightMin {
		return nil
	}
	// The lower-cased word between dots as UTF-8, with the byte offset
	// of every rune: a map lookup keyed by string(buf[a:b]) does not
	// allocate.
	buf := make([]byte, 0, 4*n+2)
	offs := make([]int, 0, n+3)
	offs = append(offs, 0)
	buf = append(buf, '.')
	for _, r := range word {
		offs = append(offs, len(buf))
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
	}
	offs = append(offs, len(buf))
	buf = append(buf, '.')
	offs = append(offs, len(buf))
	runes := n + 2
	score := make([]uint8, runes+1)
	for i := 0; i < runes; i++ {
		end := min(runes, i+p.maxLen)
		for j := i + 1; j <= end; j++ {
			key := buf[offs[i]:offs[j]]
			if vals, ok := p.values[string(key)]; ok {
				for k, v := range vals {
					if v > score[i+k] {
						score[i+k] = v
					}
				}
			}
			if _, ok := p.more[string(key)]; !ok {
				break
			}
		}
	}
	var out []int
	// A break before word[k] is the value at dotted position k+1.
	for k := p.leftMin; k <= n-p.rightMin; k++ {
		if score[k+1]%2 == 1 {
			out = append(out, k)
		}
	}
	return out
}

// Hyphenate returns word with sep inserted at every hyphenation point.
func (p *Patterns) Hyphenate(word, sep string) string {
	rs := []rune(word)
	pts := p.Points(rs)
	if len(pts) == 0 {
		return word
	}
	var b strings.Builder
	last := 0
	for _, k := range pts {
		b.WriteString(string(rs[last:k]))
		b.WriteString(sep)
		last = k
	}
	b.WriteString(string(rs[last:]))
	return b.String()
}

type langFile struct {
	file              string
	leftMin, rightMin int
	once              sync.Once
	p                 *Patterns
}

func (l *langFile) load() *Patterns {
	l.once.Do(func() {
		data, err := patternFiles.ReadFile("patterns/" + l.file)
		if err != nil {
			panic("hyphenate: embedded pattern file missing: " + l.file)
		}
		l.p = ParsePatterns(data, l.leftMin, l.rightMin)
	})
	return l.p
}

// The hyphenmins are those the pattern files state: de-1996 2/2 (its
// header, the .pat.txt carries none), the LibreOffice English files set
// LEFTHYPHENMIN 2 / RIGHTHYPHENMIN 3 themselves.
var (
	german    = &langFile{file: "hyph-de-1996.pat.txt", leftMin: 2, rightMin: 2}
	englishUS = &langFile{file: "hyph_en_US.dic", leftMin: 2, rightMin: 3}
	englishGB = &langFile{file: "hyph_en_GB.dic", leftMin: 2, rightMin: 3}
)

// britishRegions use the British patterns; every other en-* the American.
var britishRegions = map[string]bool{"gb": true, "uk": true, "au": true, "nz": true, "ie": true, "za": true, "in": true}

// ForLanguage returns the patterns for a BCP 47 language tag or culture
// name ("de", "de-AT", "en_GB", "EN-us"), or nil when none are shipped.
func ForLanguage(lang string) *Patterns {
	tag := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(lang), "_", "-"))
	primary, region, _ := strings.Cut(tag, "-")
	if i := strings.IndexByte(region, '-'); i >= 0 {
		region = region[:i]
	}
	switch primary {
	case "de":
		return german.load()
	case "en":
		if britishRegions[region] {
			return englishGB.load()
		}
		return englishUS.load()
	}
	return nil
}
