package content

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// Comment bodies are XHTML with a single <div> root (NovaDB: anything else
// is 400). They are shown to other users in rich-text views, so besides
// well-formedness the validator rejects what can run code there. It works
// on the encoding/xml token stream in strict mode: no DOCTYPE, no
// processing instructions besides an initial XML declaration, only the
// XML and HTML 4 named entities (xml.HTMLEntity, so "&nbsp;" is fine),
// balanced tags, valid UTF-8.

// MaxCommentBodyBytes caps a comment body.
const MaxCommentBodyBytes = 256 << 10

// maxCommentDepth caps element nesting.
const maxCommentDepth = 128

// xhtmlNS is the XHTML namespace; the root may also have no namespace.
const xhtmlNS = "http://www.w3.org/1999/xhtml"

// forbiddenElements can run code or embed other documents. Matched on the
// local name without case, whatever the namespace (an <svg:script> is a
// script too).
var forbiddenElements = map[string]string{
	"script":   "script elements",
	"iframe":   "iframe elements",
	"frame":    "frame elements",
	"frameset": "frameset elements",
	"object":   "object elements",
	"embed":    "embed elements",
	"applet":   "applet elements",
	"base":     "base elements",
	"meta":     "meta elements",
	"link":     "link elements",
	"style":    "style elements",
}

// forbiddenSchemes are URL schemes that run code when followed. Checked on
// every attribute value after dropping ASCII whitespace and control
// characters (browsers ignore them inside a scheme) and lower-casing.
var forbiddenSchemes = []string{"javascript:", "vbscript:", "data:text/html"}

// ValidateCommentBody checks a comment body. A failure wraps ErrInvalid and
// names the problem ("comment body: script elements are not allowed").
func ValidateCommentBody(body string) error {
	if strings.TrimSpace(body) == "" {
		return bodyErr("is empty")
	}
	if len(body) > MaxCommentBodyBytes {
		return bodyErr("is longer than %d bytes", MaxCommentBodyBytes)
	}
	if !utf8.ValidString(body) {
		return bodyErr("is not valid UTF-8")
	}
	d := xml.NewDecoder(strings.NewReader(body))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	depth, roots, tokens := 0, 0, 0
	var prev int64
	for {
		tok, err := d.Token()
		raw := body[prev:d.InputOffset()]
		prev = d.InputOffset()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bodyErr("is not well-formed XHTML: %s", strings.TrimPrefix(err.Error(), "XML syntax error "))
		}
		tokens++
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if roots > 1 {
					return bodyErr("must have a single <div> root element, found a second root <%s>", t.Name.Local)
				}
				if t.Name.Local != "div" || (t.Name.Space != "" && t.Name.Space != xhtmlNS) {
					return bodyErr("must have a <div> root element, found <%s>", t.Name.Local)
				}
			}
			depth++
			if depth > maxCommentDepth {
				return bodyErr("nests elements deeper than %d", maxCommentDepth)
			}
			if what, bad := forbiddenElements[strings.ToLower(t.Name.Local)]; bad {
				return bodyErr("must not contain %s (<%s>)", what, t.Name.Local)
			}
			for _, a := range t.Attr {
				if err := checkAttr(t.Name, a); err != nil {
					return err
				}
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			// Rendered by an HTML (not XML) parser, a CDATA section turns
			// into a bogus comment that ends at the first ">", and markup
			// after it becomes live: "<![CDATA[ > <img onerror=…> ]]>".
			if strings.Contains(raw, "<![CDATA[") {
				return bodyErr("must not contain CDATA sections: escape the text instead")
			}
			if depth == 0 && strings.TrimSpace(string(t)) != "" {
				return bodyErr("has text outside the <div> root element")
			}
		case xml.ProcInst:
			if t.Target != "xml" || tokens != 1 {
				return bodyErr("must not contain processing instructions (<?%s?>)", t.Target)
			}
		case xml.Directive:
			return bodyErr("must not contain DOCTYPE or other directives")
		case xml.Comment:
			// An HTML parser may end a comment elsewhere than XML does
			// ("<!-->", "--!>"); without angle brackets inside, both agree.
			if strings.ContainsAny(string(t), "<>!") {
				return bodyErr("must not contain comments with <, > or !")
			}
		}
	}
	if roots == 0 {
		return bodyErr("must have a <div> root element")
	}
	return nil
}

func checkAttr(el xml.Name, a xml.Attr) error {
	if name := strings.ToLower(a.Name.Local); strings.HasPrefix(name, "on") {
		return bodyErr("must not contain event handler attributes (%s on <%s>)", a.Name.Local, el.Local)
	}
	v := strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, a.Value)
	v = strings.ToLower(v)
	for _, s := range forbiddenSchemes {
		if strings.HasPrefix(v, s) {
			return bodyErr("must not contain %s URLs (%s on <%s>)", strings.TrimSuffix(s, ":"), a.Name.Local, el.Local)
		}
		// CSS can follow URLs too: style="background:url(javascript:…)".
		if strings.Contains(v, "url("+s) || strings.Contains(v, "url('"+s) || strings.Contains(v, `url("`+s) {
			return bodyErr("must not contain %s URLs (%s on <%s>)", strings.TrimSuffix(s, ":"), a.Name.Local, el.Local)
		}
	}
	if strings.Contains(v, "expression(") {
		return bodyErr("must not contain CSS expressions (%s on <%s>)", a.Name.Local, el.Local)
	}
	return nil
}

func bodyErr(format string, args ...any) error {
	return invalidf("comment body "+format, args...)
}
