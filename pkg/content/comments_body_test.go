package content

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestValidateCommentBody(t *testing.T) {
	ok := []string{
		`<div>Looks good</div>`,
		`<div/>`,
		`  <div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <span class="mention" data-user="bob">@bob</span></p></div>` + "\n",
		`<?xml version="1.0" encoding="UTF-8"?><div>decl</div>`,
		`<div>a &amp; b &lt;script&gt; &nbsp; &#233; &#x1F600;</div>`,
		`<div><a href="https://example.com/?q=javascript:">link</a><img src="/files/x.png" alt="x"/></div>`,
		`<div><!-- a note --><b>bold</b><br/></div>`,
		`<div style="color: red">javascript: is just text here</div>`,
		`<div><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg></div>`,
	}
	for _, b := range ok {
		if err := ValidateCommentBody(b); err != nil {
			t.Errorf("ValidateCommentBody(%q) = %v, want ok", b, err)
		}
	}
	bad := []struct{ body, want string }{
		{``, "empty"},
		{"  \n", "empty"},
		{`Looks good`, "<div> root"},
		{`<p>x</p>`, "<div> root element, found <p>"},
		{`<DIV>x</DIV>`, "found <DIV>"},
		{`<div xmlns="urn:other">x</div>`, "<div> root"},
		{`<div>a</div><div>b</div>`, "second root <div>"},
		{`<div>a</div>tail`, "text outside"},
		{`<div><p>unclosed</div>`, "not well-formed"},
		{`<div>`, "not well-formed"},
		{`<div>a & b</div>`, "not well-formed"},
		{`<div>&colon;</div>`, "not well-formed"},
		{`<div><br></div>`, "not well-formed"},
		{"<div>\xff</div>", "UTF-8"},
		{`<div><script>alert(1)</script></div>`, "script elements"},
		{`<div><SCRIPT>alert(1)</SCRIPT></div>`, "script elements"},
		{`<div><svg:script xmlns:svg="http://www.w3.org/2000/svg">x</svg:script></div>`, "script elements"},
		{`<div><iframe src="https://evil"/></div>`, "iframe elements"},
		{`<div><object data="x.swf"/></div>`, "object elements"},
		{`<div><embed src="x.swf"/></div>`, "embed elements"},
		{`<div><style>body{}</style></div>`, "style elements"},
		{`<div><img src="x" onerror="alert(1)"/></div>`, "event handler attributes (onerror on <img>)"},
		{`<div onClick="x()">a</div>`, "event handler attributes (onClick on <div>)"},
		{`<div><a href="javascript:alert(1)">x</a></div>`, "javascript URLs (href on <a>)"},
		{`<div><a href=" JaVaScRiPt:alert(1)">x</a></div>`, "javascript URL"},
		{`<div><a href="jav&#x09;ascript:alert(1)">x</a></div>`, "javascript URL"},
		{`<div><a href="&#106;avascript:alert(1)">x</a></div>`, "javascript URL"},
		{`<div><a href="vbscript:x">x</a></div>`, "vbscript URL"},
		{`<div><a href="data:text/html;base64,PHNjcmlwdD4=">x</a></div>`, "data:text/html URL"},
		{`<div><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="javascript:x">y</a></svg></div>`, "javascript URLs (href on <a>)"},
		{`<div style="background:url(javascript:alert(1))">x</div>`, "javascript URLs (style on <div>)"},
		{`<div style="width: expression(alert(1))">x</div>`, "CSS expression"},
		{`<div><![CDATA[ > <img src=x onerror=alert(1)> ]]></div>`, "CDATA"},
		{`<div><!-- <img src=x onerror=alert(1)> --></div>`, "comment"},
		{`<!DOCTYPE div><div/>`, "DOCTYPE"},
		{`<div><?php echo 1; ?></div>`, "processing instructions"},
		{`<div/><?xml version="1.0"?>`, "processing instructions"},
		{`<div>` + strings.Repeat("<b>", 200) + strings.Repeat("</b>", 200) + `</div>`, "deeper than"},
		{`<div>` + strings.Repeat("x", MaxCommentBodyBytes) + `</div>`, "longer than"},
	}
	for _, tc := range bad {
		err := ValidateCommentBody(tc.body)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateCommentBody(%.60q) = %v, want ErrInvalid", tc.body, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateCommentBody(%.60q) = %q, want it to mention %q", tc.body, err, tc.want)
		}
	}
}

// FuzzValidateCommentBody: the validator never panics, fails only with
// ErrInvalid, and whatever it accepts is, checked independently on the
// token stream, a single XHTML <div> root without forbidden elements,
// event handler attributes or script URLs.
func FuzzValidateCommentBody(f *testing.F) {
	for _, s := range []string{
		`<div>Looks good</div>`, `<div/>`, `<p>x</p>`, `<div><script>x</script></div>`,
		`<div><a href="javascript:x">y</a></div>`, `<div><img onerror="x"/></div>`, `<div>&nbsp;&amp;</div>`,
		`<?xml version="1.0"?><div xmlns="http://www.w3.org/1999/xhtml"><p>a</p></div>`,
		`<div><![CDATA[x]]></div>`, `<div><!-- c --></div>`, `<div>a</div><div>b</div>`, `<div><svg:a xmlns:svg="s"/></div>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		err := ValidateCommentBody(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		d := xml.NewDecoder(strings.NewReader(body))
		d.Strict = true
		d.Entity = xml.HTMLEntity
		depth, roots := 0, 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("accepted body does not parse: %v", err)
			}
			switch tk := tok.(type) {
			case xml.StartElement:
				if depth == 0 {
					roots++
					if tk.Name.Local != "div" {
						t.Fatalf("accepted root <%s>", tk.Name.Local)
					}
				}
				depth++
				switch strings.ToLower(tk.Name.Local) {
				case "script", "iframe", "object", "embed":
					t.Fatalf("accepted <%s>", tk.Name.Local)
				}
				for _, a := range tk.Attr {
					if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
						t.Fatalf("accepted attribute %s", a.Name.Local)
					}
					v := strings.ToLower(strings.Join(strings.FieldsFunc(a.Value, func(r rune) bool { return r <= ' ' || r == 0x7f }), ""))
					if strings.HasPrefix(v, "javascript:") {
						t.Fatalf("accepted javascript URL in %s", a.Name.Local)
					}
				}
			case xml.EndElement:
				depth--
			case xml.CharData:
				if depth == 0 && strings.TrimSpace(string(tk)) != "" {
					t.Fatalf("accepted text outside the root: %q", tk)
				}
			case xml.Directive:
				t.Fatalf("accepted directive %q", tk)
			}
		}
		if roots != 1 || depth != 0 {
			t.Fatalf("accepted body with %d roots, final depth %d", roots, depth)
		}
		if len(body) > MaxCommentBodyBytes {
			t.Fatalf("accepted %d bytes", len(body))
		}
	})
}
