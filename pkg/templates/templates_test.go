package templates

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/templates/sandbox"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

func val(attr, lang int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

func varVal(attr, lang, variant int64, v any) content.ValueInput {
	in := val(attr, lang, v)
	in.Variant = variant
	return in
}

// world is a small model on an embedded store: articles (display name:
// headline) by persons, and templates.
type world struct {
	c                                *content.Service
	article, person, channel, print  int64
	headline, price, published, body int64
	author                           int64
	a1, a2, a3, ann, bob             int64
}

var create = setups.CreateObject

func newWorld(t testing.TB) world { return newWorldOn(t, setups.Content(t)) }

// backends runs fn on an embedded (SQLite) and a PostgreSQL store.
func backends(t *testing.T, fn func(t *testing.T, w world)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, newWorld(t)) })
	t.Run("postgres", func(t *testing.T) {
		st := setups.PostgresStore(t)
		if err := content.Bootstrap(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		fn(t, newWorldOn(t, content.New(st, nil)))
	})
}

func newWorldOn(t testing.TB, c *content.Service) world {
	w := world{c: c}
	en, de := content.LanguageEnUS, content.LanguageDeDE
	attr := func(api, dt string, extra ...content.ValueInput) int64 {
		return create(t, c, content.TypeAttribute, api, append([]content.ValueInput{val(content.AttrDataType, 0, dt)}, extra...)...)
	}
	w.channel = create(t, c, content.RootID, "channel", val(content.AttrName, en, "Channel"))
	w.print = create(t, c, w.channel, "print", val(content.AttrName, en, "Print"))
	w.headline = attr("headline", "String", val(content.AttrLanguageDependent, 0, true), val(content.AttrVariantAxis, 0, w.channel))
	w.price = attr("price", "Decimal")
	w.published = attr("published", "DateTime")
	w.body = attr("body", "XmlRef.SimpleHtml")
	w.author = attr("author", "ObjRef")
	w.article = create(t, c, content.RootID, "article", val(content.AttrName, en, "Article"), val(content.AttrTypeDisplayName, 0, w.headline))
	w.person = create(t, c, content.RootID, "person", val(content.AttrName, en, "Person"))
	w.ann = create(t, c, w.person, "ann", val(content.AttrName, en, "Ann"), val(content.AttrName, de, "Anna"))
	w.bob = create(t, c, w.person, "", val(content.AttrName, en, "Bob"))
	w.a1 = create(t, c, w.article, "first", val(w.headline, en, "Hello"), val(w.headline, de, "Hallo"), varVal(w.headline, en, w.print, "HELLO (print)"),
		val(w.price, 0, 1234.5), val(w.published, 0, "2024-03-05T14:30:00Z"), val(w.author, 0, w.ann),
		val(w.body, 0, `<div><p onclick="x()">Safe <b>bold</b></p><script>alert(1)</script><a href="javascript:alert(1)">l</a></div>`))
	w.a2 = create(t, c, w.article, "", val(w.headline, en, "Only English"), val(w.price, 0, 7), val(w.author, 0, w.bob))
	w.a3 = create(t, c, w.article, "", val(w.headline, de, "Nur Deutsch"), val(w.author, 0, w.ann))
	return w
}

func (w world) template(t testing.TB, api, src string) string {
	t.Helper()
	return strconv.FormatInt(create(t, w.c, content.TypeRazorView, api, val(content.AttrName, content.LanguageEnUS, api),
		val(content.AttrTemplateSource, 0, src)), 10)
}

func ids(xs ...int64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatInt(x, 10)
	}
	return out
}

// The function set over three articles in two languages: values along the
// language fallback (de-DE falls back to en-US, then language 0), the
// variant chain, references read once for the whole list, display names
// by the type's display-name attribute, culture formatting, sanitized
// XHTML.
func TestFunctions(t *testing.T) { backends(t, testFunctions) }

func testFunctions(t *testing.T, w world) {
	s := New(w.c, Limits{}, nil)
	ctx := context.Background()
	list := w.template(t, "list", `{{range .Objects}}[{{name .}}|{{value . "headline"}}|{{name (ref . "author")}}|{{number (value . "price") 2}}]{{end}}`)
	render := func(req Request) string {
		t.Helper()
		req.Branch = "4"
		res, err := s.Render(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return string(res.HTML)
	}
	objs := ids(w.a1, w.a2, w.a3)
	if got, want := render(Request{Template: list, Objects: objs, Languages: []string{"en-US"}}),
		"[Hello|Hello|Ann|1,234.50][Only English|Only English|Bob|7.00][||Ann|]"; got != want {
		t.Errorf("en-US: %s, want %s", got, want)
	}
	if got, want := render(Request{Template: list, Objects: objs, Languages: []string{"de-DE"}}),
		"[Hallo|Hallo|Anna|1.234,50][Only English|Only English|Bob|7,00][Nur Deutsch|Nur Deutsch|Anna|]"; got != want {
		t.Errorf("de-DE: %s, want %s", got, want)
	}
	if got, want := render(Request{Template: list, Objects: objs[:1], Languages: []string{"de-DE"}, Variants: []string{"print"}}),
		"[HELLO (print)|HELLO (print)|Anna|1.234,50]"; got != want {
		t.Errorf("variant print: %s, want %s", got, want)
	}
	dates := w.template(t, "dates", `{{date (value .Object "published")}}; {{date (value .Object "published") "long"}}; {{date (value .Object "published") "shortTime"}}`)
	for culture, want := range map[string]string{
		"en-US": "3/5/2024; March 5, 2024; 3/5/2024 2:30 PM",
		"de-DE": "05.03.2024; 5. März 2024; 05.03.2024 14:30",
		"fr-CH": "05/03/2024; 5 mars 2024; 05/03/2024 14:30",
		"en-GB": "05/03/2024; 5 March 2024; 05/03/2024 14:30",
	} {
		if got := render(Request{Template: dates, Objects: objs[:1], UICulture: culture}); got != want {
			t.Errorf("dates %s: %s, want %s", culture, got, want)
		}
	}
	body := w.template(t, "bodytpl", `{{xhtml .Object "body"}}|{{value .Object "body"}}|{{param "x"}}`)
	got := render(Request{Template: body, Objects: objs[:1], Parameters: map[string]string{"x": "<i>"}})
	sanitized, rest, _ := strings.Cut(got, "|")
	if sanitized != "<div><p>Safe <b>bold</b></p>l</div>" || !strings.HasPrefix(rest, "&lt;div&gt;&lt;p onclick=") || !strings.HasSuffix(got, "|&lt;i&gt;") {
		t.Errorf("sanitized XHTML: %s", got)
	}
}

// Templates call templates by id or ApiIdentifier, over given objects;
// depth and cycles are bounded; errors carry the failing template and its
// position; limits answer their kinds.
func TestNestingAndErrors(t *testing.T) {
	w := newWorld(t)
	s := New(w.c, Limits{Engine: sandbox.Limits{Timeout: 300 * time.Millisecond}}, nil)
	ctx := context.Background()
	w.template(t, "item", `<li>{{value .Object "headline"}}</li>`)
	outer := w.template(t, "outer", `<ul>{{range .Objects}}{{render "item" .}}{{end}}</ul>`)
	res, err := s.Render(ctx, Request{Branch: "4", Template: outer, Objects: ids(w.a1, w.a2)})
	if err != nil || string(res.HTML) != "<ul><li>Hello</li><li>Only English</li></ul>" {
		t.Fatalf("nested: %s, %v", res.HTML, err)
	}
	again, _ := s.Render(ctx, Request{Branch: "4", Template: outer, Objects: ids(w.a1, w.a2)})
	other, _ := s.Render(ctx, Request{Branch: "4", Template: outer, Objects: ids(w.a2)})
	if res.ETag == "" || again.ETag != res.ETag || other.ETag == res.ETag {
		t.Errorf("ETags %s %s %s", res.ETag, again.ETag, other.ETag)
	}
	self := w.template(t, "self", `x{{render "self"}}`)
	badInner := w.template(t, "badinner", "ok\n  {{index .Objects 7}}")
	callsBad := w.template(t, "callsbad", `{{render "badinner"}}`)
	syntax := w.template(t, "syntax", "<p>\n{{value .Object \"headline\"</p>")
	loop := w.template(t, "loop", "a\n {{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}")
	unknown := w.template(t, "unknown", `{{object "noSuchObject"}}`)
	many := w.template(t, "many", `{{range .Objects}}{{with ref . "author"}}{{.ID}}{{end}}{{end}}`)
	for _, c := range []struct {
		tpl       string
		objs      []string
		template  string
		line, col int
		msg       string
	}{
		{self, nil, self, 1, 0, "calls itself"},
		{callsBad, ids(w.a1), badInner, 2, 4, "index out of range"},
		{syntax, nil, syntax, 2, 0, "unexpected"},
		{loop, nil, loop, 2, 0, "time limit"},
		{unknown, nil, unknown, 1, 0, "noSuchObject"},
	} {
		_, err := s.Render(ctx, Request{Branch: "4", Template: c.tpl, Objects: c.objs})
		var te *TemplateError
		if !errors.As(err, &te) || errkind.Of(err) != errkind.Unprocessable || strconv.FormatInt(te.Template, 10) != c.template ||
			te.Line != c.line || c.col != 0 && te.Column != c.col || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("template %s: %v (%+v), want template %s line %d containing %q", c.tpl, err, te, c.template, c.line, c.msg)
		}
	}
	// The template, 3 objects, the attribute, then the 2 authors: 7 reads.
	_, err = New(w.c, Limits{MaxReads: 6}, nil).Render(ctx, Request{Branch: "4", Template: many, Objects: ids(w.a1, w.a2, w.a3)})
	if te := (*TemplateError)(nil); !errors.As(err, &te) || !strings.Contains(te.Msg, "at most 6 objects") || te.Line != 1 {
		t.Errorf("too many reads: %v", err)
	}
	if _, err := New(w.c, Limits{MaxReads: 7}, nil).Render(ctx, Request{Branch: "4", Template: many, Objects: ids(w.a1, w.a2, w.a3)}); err != nil {
		t.Errorf("7 reads: %v", err)
	}
	deep := New(w.c, Limits{MaxDepth: 2}, nil)
	w.template(t, "d2", `{{render "item"}}`)
	d1 := w.template(t, "d1", `{{render "d2"}}`)
	if _, err := deep.Render(ctx, Request{Branch: "4", Template: d1, Objects: ids(w.a1)}); !errors.Is(err, ErrTemplate) ||
		!strings.Contains(err.Error(), "at most 2 deep") {
		t.Errorf("depth: %v", err)
	}
	for name, req := range map[string]Request{
		"unknown template": {Template: "999999"},
		"not a template":   {Template: ids(w.a1)[0]},
		"unknown object":   {Template: outer, Objects: []string{"999999"}},
		"unknown branch":   {Template: outer, Branch: "999999"},
	} {
		if req.Branch == "" {
			req.Branch = "4"
		}
		if _, err := s.Render(ctx, req); errkind.Of(err) != errkind.NotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	for name, req := range map[string]Request{
		"501 objects":      {Template: outer, Objects: make([]string, 501)},
		"unknown language": {Template: outer, Languages: []string{"xx-YY"}},
		"unknown variant":  {Template: outer, Variants: []string{"noSuchVariant"}},
		"bad culture":      {Template: outer, UICulture: "not a tag!"},
	} {
		req.Branch = "4"
		if _, err := s.Render(ctx, req); errkind.Of(err) != errkind.Invalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	var jobs []Request
	for range 101 {
		jobs = append(jobs, Request{Branch: "4", Template: outer})
	}
	if _, err := s.RenderBatch(ctx, jobs); errkind.Of(err) != errkind.Invalid {
		t.Errorf("101 jobs: %v", err)
	}
	// More renders than the engine runs at once: unavailable (503).
	one := New(w.c, Limits{Engine: sandbox.Limits{MaxRunning: 1, Timeout: 2 * time.Second}}, nil)
	done := make(chan error, 1)
	startLoop := func() {
		go func() {
			_, err := one.Render(ctx, Request{Branch: "4", Template: loop})
			done <- err
		}()
	}
	startLoop()
	busy := false
	for !busy {
		_, err := one.Render(ctx, Request{Branch: "4", Template: outer})
		busy = errors.Is(err, component.ErrUnavailable)
		select {
		case err := <-done:
			if !busy && errors.Is(err, component.ErrUnavailable) {
				startLoop() // the probe took the one slot first: the loop found the engine busy
				continue
			}
			t.Fatalf("the loop ended (%v) before a render found the engine busy", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := <-done; !errors.Is(err, ErrTemplate) {
		t.Errorf("the running loop: %v", err)
	}
	// The outputs of a batch together are bounded: with room for one
	// output, the other job is 413 and the first keeps its output.
	small := New(w.c, Limits{MaxBatchBytes: 30, BatchConcurrency: 1}, nil)
	two, err := small.RenderBatch(ctx, []Request{{Branch: "4", Template: outer, Objects: ids(w.a1)}, {Branch: "4", Template: outer, Objects: ids(w.a1)}})
	if err != nil || two[0].Err != nil || len(two[0].Result.HTML) == 0 || errkind.Of(two[1].Err) != errkind.TooLarge || two[1].Result.HTML != nil {
		t.Errorf("batch output bound: %+v, %v", two, err)
	}
	out, err := s.RenderBatch(ctx, []Request{{Branch: "4", Template: outer, Objects: ids(w.a1)}, {Branch: "4", Template: syntax}, {Branch: "4", Template: "999999"}})
	if err != nil || out[0].Err != nil || string(out[0].Result.HTML) != "<ul><li>Hello</li></ul>" ||
		!errors.Is(out[1].Err, ErrTemplate) || errkind.Of(out[2].Err) != errkind.NotFound {
		t.Errorf("batch: %+v, %v", out, err)
	}
}
