package indexwriter

import (
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/store"
)

// XHTML helpers for comment bodies and XML values.
//
// Mentions. NovaDB only says that mentions are <span> elements; the markup
// is undocumented. The rule here: a <span> (any namespace) is a mention
// when it has a non-empty data-user, data-username or data-mention
// attribute (the user name is that value), or when its class list
// contains "mention" (the user name is the span's text without a leading
// "@"). Names are trimmed, de-duplicated without regard to case (the first
// spelling wins) and kept in document order.
//
// XML links. NovaDB's link markup in XmlRef values is undocumented too.
// The rule here: an element links to object N (N > 0, decimal) when it has
// an attribute data-objref, data-object-id or objref with value N, or an
// href/src attribute "objref:N" or "cms://objects/N" (case-insensitive
// scheme). Every such id lands in indexdoc.FieldXMLLinks of the object document.

// inlineElements do not separate words in the text of a body.
var inlineElements = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true, "code": true, "data": true,
	"dfn": true, "em": true, "i": true, "kbd": true, "mark": true, "q": true, "s": true, "samp": true,
	"small": true, "span": true, "strong": true, "sub": true, "sup": true, "time": true, "u": true, "var": true,
}

// CommentSummaryRunes is the length of a summary before the ellipsis.
const CommentSummaryRunes = 64

// ParseCommentBody returns the text of a comment body (tags dropped,
// entities decoded, whitespace collapsed) and the users it mentions. A
// body that is not well-formed yields its tag-stripped text and no
// mentions.
func ParseCommentBody(body string) (text string, mentions []string) {
	d := xml.NewDecoder(strings.NewReader(body))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	var b strings.Builder
	type open struct {
		mention bool
		named   string
		text    strings.Builder
	}
	var stack []*open
	seen := map[string]bool{}
	addMention := func(name string) {
		name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "@"))
		if name == "" || seen[store.CommentUserKey(name)] {
			return
		}
		seen[store.CommentUserKey(name)] = true
		mentions = append(mentions, name)
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return stripTags(body), nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !inlineElements[strings.ToLower(t.Name.Local)] {
				b.WriteByte(' ')
			}
			o := &open{}
			if strings.EqualFold(t.Name.Local, "span") {
				for _, a := range t.Attr {
					switch strings.ToLower(a.Name.Local) {
					case "data-user", "data-username", "data-mention":
						if strings.TrimSpace(a.Value) != "" && o.named == "" {
							o.named = a.Value
						}
					case "class":
						if slices.Contains(strings.Fields(strings.ToLower(a.Value)), "mention") {
							o.mention = true
						}
					}
				}
			}
			stack = append(stack, o)
		case xml.EndElement:
			if !inlineElements[strings.ToLower(t.Name.Local)] {
				b.WriteByte(' ')
			}
			if len(stack) == 0 {
				continue
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch {
			case o.named != "":
				addMention(o.named)
			case o.mention:
				addMention(o.text.String())
			}
		case xml.CharData:
			b.Write(t)
			for _, o := range stack {
				if o.mention && o.named == "" {
					o.text.Write(t)
				}
			}
		}
	}
	return strings.Join(strings.Fields(b.String()), " "), mentions
}

// CommentSummary is the single-line summary of a comment text: at most
// CommentSummaryRunes characters, followed by "…" when cut.
func CommentSummary(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= CommentSummaryRunes {
		return text
	}
	r := []rune(text)
	return strings.TrimRight(string(r[:CommentSummaryRunes]), " ") + "…"
}

// XMLLinks returns the object ids an XHTML value links to (see the rule
// above), de-duplicated, in document order. Malformed markup yields the
// links found before the error.
func XMLLinks(value string) []int64 {
	d := xml.NewDecoder(strings.NewReader(value))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	var out []int64
	add := func(s string) {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err == nil && n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		for _, a := range el.Attr {
			switch strings.ToLower(a.Name.Local) {
			case "data-objref", "data-object-id", "objref":
				add(a.Value)
			case "href", "src":
				v := strings.TrimSpace(a.Value)
				for _, p := range []string{"objref:", "cms://objects/"} {
					if len(v) > len(p) && strings.EqualFold(v[:len(p)], p) {
						add(v[len(p):])
					}
				}
			}
		}
	}
}
