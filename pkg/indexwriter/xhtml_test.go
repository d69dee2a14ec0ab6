package indexwriter_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexwriter"
)

func TestParseCommentBody(t *testing.T) {
	for _, c := range []struct {
		body, text string
		mentions   []string
	}{
		{`<div>Looks good</div>`, "Looks good", nil},
		{`<div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <span class="mention" data-user="bob">@bob</span>,</p><p>see&nbsp;<b>this</b> &amp; that</p></div>`,
			"Hi @bob, see this & that", []string{"bob"}},
		{`<div><span class="x Mention">@Carol</span> <span class="mention">@carol</span> <span data-username="Dave">D.</span></div>`,
			"@Carol @carol D.", []string{"Carol", "Dave"}},
		{`<div><span>@plain</span> <span class="mention">  </span> <span data-mention="">@x</span></div>`, "@plain @x", nil},
		{`<div><p>one</p><p>two</p></div>`, "one two", nil},
		{`<div>broken <b>markup</div>`, "broken markup", nil},
	} {
		text, mentions := indexwriter.ParseCommentBody(c.body)
		if text != c.text || !slices.Equal(mentions, c.mentions) {
			t.Errorf("ParseCommentBody(%q) = %q, %q; want %q, %q", c.body, text, mentions, c.text, c.mentions)
		}
	}
}

func TestCommentSummary(t *testing.T) {
	if s := indexwriter.CommentSummary("short  text\nhere"); s != "short text here" {
		t.Errorf("short: %q", s)
	}
	exact := strings.Repeat("ä", 64)
	if s := indexwriter.CommentSummary(exact); s != exact {
		t.Errorf("64 runes cut: %q", s)
	}
	if s := indexwriter.CommentSummary(exact + "b"); s != exact+"…" {
		t.Errorf("65 runes: %q", s)
	}
}

func TestXMLLinks(t *testing.T) {
	for _, c := range []struct {
		xml  string
		want []int64
	}{
		{`<div><a href="objref:12">x</a><a href="OBJREF:12">again</a><img src="cms://objects/7"/></div>`, []int64{12, 7}},
		{`<div><span data-objref="3"/><a data-object-id=" 4 ">y</a><x objref="5"/></div>`, []int64{3, 4, 5}},
		{`<div><a href="https://x/objref:9">no</a><a href="objref:-1">neg</a><a href="objref:abc">nan</a><a data-objref="0"/></div>`, nil},
		{`<div><a href="objref:1">ok</a><broken`, []int64{1}},
	} {
		if got := indexwriter.XMLLinks(c.xml); !slices.Equal(got, c.want) {
			t.Errorf("XMLLinks(%q) = %v, want %v", c.xml, got, c.want)
		}
	}
}
