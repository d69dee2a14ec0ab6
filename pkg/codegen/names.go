package codegen

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// # Names
//
// Type and member names are the PascalCase form of the ApiIdentifier (of
// the display name for a type without one): every run of ASCII letters
// and digits is a word, its first letter upper case, everything else (".",
// "-", "_", any other character) dropped ("my-type.v2" → MyTypeV2,
// "attributeName" → AttributeName). Types with an ApiIdentifier are named
// before those without (typeNames). Then:
//
//   - nothing left (no ASCII letter or digit): Type<id> / Attribute<id>;
//   - a leading digit gets a "_" in front ("2ndPage" → _2ndPage);
//   - a name already taken (by an earlier type or attribute in id order, a
//     generated helper or member, or the enclosing class) gets "_<id>"
//     appended. Natural names never hold an inner "_", so these never
//     collide again, and they are stable: ids never change, and the types
//     named first are the ones created first.
//
// Keywords need no rule: PascalCase names start upper case and every C#
// and TypeScript keyword is lower case. TypeScript property keys stay the
// exact ApiIdentifier (that is what Delivery sends), quoted where they are
// not plain identifiers.

// pascal is the PascalCase form of s ("" when s holds no ASCII letter or
// digit).
func pascal(s string) string {
	var b strings.Builder
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			if upper {
				c -= 'a' - 'A'
			}
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			upper = true
			continue
		}
		b.WriteByte(c)
		upper = false
	}
	out := b.String()
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

// namer hands out unique names.
type namer struct{ used map[string]bool }

func newNamer(reserved ...string) *namer {
	n := &namer{used: map[string]bool{}}
	for _, r := range reserved {
		n.used[r] = true
	}
	return n
}

// take returns the name for the object id with identifier api: pascal(api)
// (fallback+id when empty), or that with "_<id>" when it, or it with any of
// the suffixes, is taken. It marks the name and its suffixed forms used.
func (n *namer) take(api, fallback string, id int64, suffixes ...string) string {
	base := pascal(api)
	if base == "" {
		base = fallback + strconv.FormatInt(id, 10)
	}
	if n.taken(base, suffixes) {
		base += "_" + strconv.FormatInt(id, 10)
	}
	n.used[base] = true
	for _, s := range suffixes {
		n.used[base+s] = true
	}
	return base
}

func (n *namer) taken(base string, suffixes []string) bool {
	if n.used[base] {
		return true
	}
	for _, s := range suffixes {
		if n.used[base+s] {
			return true
		}
	}
	return false
}

// typeNames names every type of named and returns id → name: first the
// types with an ApiIdentifier (in id order), from it; then the types
// without one (in id order), from their display name (Type<id> when it
// holds no ASCII letter or digit). A type with an ApiIdentifier thus keeps
// its name whatever types without one exist, and a name taken (by either
// kind, a reserved name or a suffixed form) gets "_<id>".
func typeNames(named []Type, reserved []string, suffixes ...string) map[int64]string {
	ts := slices.Clone(named)
	slices.SortStableFunc(ts, func(a, b Type) int { return cmp.Compare(a.ID, b.ID) })
	n := newNamer(reserved...)
	out := make(map[int64]string, len(ts))
	for _, t := range ts {
		if t.APIIdentifier != "" {
			out[t.ID] = n.take(t.APIIdentifier, "Type", t.ID, suffixes...)
		}
	}
	for _, t := range ts {
		if t.APIIdentifier == "" {
			out[t.ID] = n.take(t.Name, "Type", t.ID, suffixes...)
		}
	}
	return out
}

// memberNames names the attributes of one class (in id order).
func memberNames(attrs []Attribute, reserved ...string) map[int64]string {
	as := slices.Clone(attrs)
	slices.SortFunc(as, func(a, b Attribute) int { return cmp.Compare(a.ID, b.ID) })
	n := newNamer(reserved...)
	out := make(map[int64]string, len(as))
	for _, a := range as {
		out[a.ID] = n.take(a.APIIdentifier, "Attribute", a.ID)
	}
	return out
}

// commentLines splits text into lines safe inside a comment of either
// language: invalid UTF-8 dropped, every line terminator either language
// knows (\r, \n, U+0085, U+2028, U+2029) ends a line, other control and
// bidirectional formatting characters become spaces, trailing spaces go,
// and empty lines at both ends are dropped.
func commentLines(text string) []string {
	text = strings.ToValidUTF8(text, "")
	var lines []string
	var b strings.Builder
	flush := func() {
		lines = append(lines, strings.TrimRightFunc(b.String(), unicode.IsSpace))
		b.Reset()
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\r' && i+1 < len(rs) && rs[i+1] == '\n':
			continue
		case r == '\r', r == '\n', r == 0x85, r == 0x2028, r == 0x2029:
			flush()
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == 0xFEFF:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	flush()
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// docText is the text of the doc comment of a type or attribute: its
// description, else its display name.
func docText(name, description string) string {
	if strings.TrimSpace(description) != "" {
		return description
	}
	return name
}
