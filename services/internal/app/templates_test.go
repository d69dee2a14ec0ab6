package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/templates"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// The render operations end to end on both setups: templates and objects
// written through Management a moment before (the Management view),
// rendered over GET and POST in two languages with references, display
// names, formatting, sanitized XHTML and a called template; ETag / 304; a
// syntax error and an endless loop answer 422 with the line and column;
// German hyphenation; a batch with failing entries; limits answer 4xx;
// every answer checked against the served Rendering document. Then the
// render cache (runRenderCacheScenario).

func TestTemplatesEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.RenderTimeout = 500 * time.Millisecond
	base, _ := startStoppable(t, cfg)
	runTemplatesScenario(t, base)
	runRenderCacheScenario(t, base)
}

func TestTemplatesDistributed(t *testing.T) {
	configFor, _ := isolatedDistributed(t, "templates")
	cfg := configFor(TargetAll)
	cfg.RenderTimeout = 500 * time.Millisecond
	base, _ := startStoppable(t, cfg)
	runTemplatesScenario(t, base)
	runRenderCacheScenario(t, base)
}

func runTemplatesScenario(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	doc := loadRenderingDoc(t)
	call := func(want int, method, path, body string, hdr ...string) httpResult {
		t.Helper()
		r := admin.must(want, method, path, body, hdr...)
		doc.check(t, method, path, body, r)
		p := strings.SplitN(path, "?", 2)[0]
		ct := "text/html; charset=utf-8"
		if strings.HasSuffix(p, "/renderBatch") {
			ct = "application/json"
		}
		if want == http.StatusOK && r.header.Get("Content-Type") != ct {
			t.Errorf("%s %s: Content-Type %q", method, path, r.header.Get("Content-Type"))
		}
		// A render is a branch editor's HTML on the API's origin: no script
		// of it runs (renderSeparateOrigin is off).
		if (want == http.StatusOK || want == http.StatusNotModified) && ct != "application/json" &&
			(r.header.Get("Content-Security-Policy") != templates.SandboxPolicy || r.header.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s %s: Content-Security-Policy %q, X-Content-Type-Options %q", method, path,
				r.header.Get("Content-Security-Policy"), r.header.Get("X-Content-Type-Options"))
		}
		return r
	}
	id := func(w write, i int) string { return strconv.FormatInt(w.CreatedObjectIDs[i], 10) }
	en, de := int(content.LanguageEnUS), int(content.LanguageDeDE)

	attrs := admin.create(
		obj(content.TypeAttribute, "headline", v(1001, 0, "String"), v(1017, 0, true)),
		obj(content.TypeAttribute, "author", v(1001, 0, "ObjRef")),
		obj(content.TypeAttribute, "body", v(1001, 0, "XmlRef.SimpleHtml")),
		obj(content.TypeAttribute, "price", v(1001, 0, "Decimal")),
		obj(content.TypeAttribute, "published", v(1001, 0, "DateTime")))
	types := admin.create(
		obj(0, "article", v(1000, en, "Article"), v(5005, 0, attrs.CreatedObjectIDs[0])),
		obj(0, "person", v(1000, en, "Person")))
	people := admin.create(
		obj(types.CreatedObjectIDs[1], "", v(1000, en, "Ann"), v(1000, de, "Anna")),
		obj(types.CreatedObjectIDs[1], "", v(1000, en, "Bob")))
	article := types.CreatedObjectIDs[0]
	arts := admin.create(
		obj(article, "", v(attrs.CreatedObjectIDs[0], en, "Hello"), v(attrs.CreatedObjectIDs[0], de, "Hallo"),
			v(attrs.CreatedObjectIDs[1], 0, people.CreatedObjectIDs[0]), v(attrs.CreatedObjectIDs[3], 0, 1234.5),
			v(attrs.CreatedObjectIDs[4], 0, "2024-03-05T14:30:00Z"),
			v(attrs.CreatedObjectIDs[2], 0, `<div><p onclick="steal()">Fine <b>print</b></p><script>alert(1)</script></div>`)),
		obj(article, "", v(attrs.CreatedObjectIDs[0], en, "Only English"), v(attrs.CreatedObjectIDs[1], 0, people.CreatedObjectIDs[1])),
		obj(article, "", v(attrs.CreatedObjectIDs[0], de, "Nur Deutsch"), v(attrs.CreatedObjectIDs[1], 0, people.CreatedObjectIDs[0])))
	tpl := func(api, src string) string {
		t.Helper()
		w := admin.create(obj(content.TypeRazorView, api, v(1000, en, api), v(content.AttrTemplateSource, 0, src)))
		return id(w, 0)
	}
	tpl("teaser", `<li>{{name .Object}} ({{name (ref .Object "author")}})</li>`)
	list := tpl("list", `<ul>{{range .Objects}}{{render "teaser" .}}{{end}}</ul>`+
		`<p>{{number (value .Object "price") 2}} {{date (value .Object "published") "long"}}</p>{{xhtml .Object "body"}}`)
	objs := id(arts, 0) + "," + id(arts, 1) + "," + id(arts, 2)
	renderPath := "/apis/rendering/v1/branches/4/templates/" + list + "/render"

	// GET in German: the fallback to en-US for the second article, the
	// reference's German name, German number and date formats, the XHTML
	// sanitized.
	r := call(http.StatusOK, http.MethodGet, renderPath+"?languages=de-DE&objects="+objs, "")
	wantDE := "<ul><li>Hallo (Anna)</li><li>Only English (Bob)</li><li>Nur Deutsch (Anna)</li></ul>" +
		"<p>1.234,50 5. März 2024</p><div><p>Fine <b>print</b></p></div>"
	if string(r.body) != wantDE {
		t.Errorf("GET de-DE:\n%s\nwant\n%s", r.body, wantDE)
	}
	tag := r.header.Get("ETag")
	if len(tag) < 10 || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("ETag %q, Cache-Control %q", tag, r.header.Get("Cache-Control"))
	}
	call(http.StatusNotModified, http.MethodGet, renderPath+"?languages=de-DE&objects="+objs, "", "If-None-Match", tag)

	// POST in English, identifiers as numbers and strings; the draft alias.
	body := fmt.Sprintf(`{"objects":[%s,"%s"],"languages":["en-US"],"uiCulture":"en-GB","parameters":{"x":"1"}}`, id(arts, 0), id(arts, 1))
	r = call(http.StatusOK, http.MethodPost, "/apis/rendering/v1/branches/draft/templates/"+list+"/render", body)
	wantEN := "<ul><li>Hello (Ann)</li><li>Only English (Bob)</li></ul><p>1,234.50 5 March 2024</p><div><p>Fine <b>print</b></p></div>"
	if string(r.body) != wantEN {
		t.Errorf("POST en-US:\n%s\nwant\n%s", r.body, wantEN)
	}
	// A write shows in the next render, with a new tag.
	admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"objects":[{"meta":{"id":%s,"typeRef":%d},"values":[%s]}]}`, id(arts, 0), article, v(attrs.CreatedObjectIDs[0], de, "Servus")))
	r = call(http.StatusOK, http.MethodGet, renderPath+"?languages=de-DE&objects="+objs, "", "If-None-Match", tag)
	if !strings.HasPrefix(string(r.body), "<ul><li>Servus (Anna)") || r.header.Get("ETag") == tag {
		t.Errorf("after a write: %s (tag %s)", r.body, r.header.Get("ETag"))
	}

	// Template errors: 422 with the template's line and column.
	problem := func(r httpResult) gateway.Problem {
		t.Helper()
		var p gateway.Problem
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatalf("problem %s: %v", r.body, err)
		}
		return p
	}
	syntax := tpl("syntax", "<p>\n  {{value .Object \"headline\"</p>")
	p := problem(call(http.StatusUnprocessableEntity, http.MethodGet, "/apis/rendering/v1/branches/4/templates/"+syntax+"/render?objects="+objs, ""))
	if p.Line != 2 || !strings.Contains(p.Detail, "template "+syntax) {
		t.Errorf("syntax error: %+v", p)
	}
	loop := tpl("loop", "x\n   {{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}")
	start := time.Now()
	p = problem(call(http.StatusUnprocessableEntity, http.MethodGet, "/apis/rendering/v1/branches/4/templates/"+loop+"/render", ""))
	if p.Line != 2 || p.Column == 0 || !strings.Contains(p.Detail, "time limit") || time.Since(start) > 5*time.Second {
		t.Errorf("endless loop after %v: %+v", time.Since(start), p)
	}

	// German hyphenation of text nodes only.
	hy := tpl("hyphen", `<p title="Donaudampfschifffahrt">{{value .Object "headline"}} Donaudampfschifffahrtsgesellschaft</p>`)
	r = call(http.StatusOK, http.MethodGet, "/apis/rendering/v1/branches/4/templates/"+hy+"/render?hyphenate=true&languages=de-DE&objects="+id(arts, 2), "")
	out := string(r.body)
	if !strings.Contains(out, "\u00ad") || !strings.Contains(out, `title="Donaudampfschifffahrt"`) ||
		strings.ReplaceAll(out, "\u00ad", "") != `<p title="Donaudampfschifffahrt">Nur Deutsch Donaudampfschifffahrtsgesellschaft</p>` {
		t.Errorf("hyphenated: %q", out)
	}

	// Not found.
	call(http.StatusNotFound, http.MethodGet, "/apis/rendering/v1/branches/4/templates/999999/render", "")
	call(http.StatusNotFound, http.MethodGet, "/apis/rendering/v1/branches/4/templates/"+id(arts, 0)+"/render", "")
	call(http.StatusNotFound, http.MethodGet, "/apis/rendering/v1/branches/999999/templates/"+list+"/render", "")
	call(http.StatusNotFound, http.MethodGet, renderPath+"?objects=999999", "")

	// A batch: one success, a template error, an unknown template.
	batch := fmt.Sprintf(`{"jobs":[{"template":%s,"objects":[%s],"languages":["de-DE"]},{"template":"syntax"},{"template":999999}]}`, list, id(arts, 2))
	r = call(http.StatusOK, http.MethodPost, "/apis/rendering/v1/branches/4/renderBatch", batch)
	var answer struct {
		Results []struct {
			Status  int              `json:"status"`
			ETag    string           `json:"etag"`
			Body    string           `json:"body"`
			Problem *gateway.Problem `json:"problem"`
		} `json:"results"`
	}
	if err := json.Unmarshal(r.body, &answer); err != nil || len(answer.Results) != 3 {
		t.Fatalf("batch answer %s: %v", r.body, err)
	}
	if a := answer.Results[0]; a.Status != 200 || !strings.HasPrefix(a.Body, "<ul><li>Nur Deutsch (Anna)</li></ul>") || a.ETag == "" {
		t.Errorf("batch job 0: %+v", a)
	}
	if a := answer.Results[1]; a.Status != 422 || a.Problem == nil || a.Problem.Line != 2 {
		t.Errorf("batch job 1: %+v", a)
	}
	if a := answer.Results[2]; a.Status != 404 || a.Problem == nil || a.Problem.Status != 404 {
		t.Errorf("batch job 2: %+v", a)
	}

	// Limits: 4xx before anything renders.
	many := strings.TrimSuffix(strings.Repeat(id(arts, 0)+",", 501), ",")
	call(http.StatusBadRequest, http.MethodGet, renderPath+"?objects="+many, "")
	call(http.StatusBadRequest, http.MethodPost, renderPath, `{"objects":[{"id":1}]}`)
	call(http.StatusBadRequest, http.MethodGet, renderPath+"?parameters="+url.QueryEscape(strings.Repeat("a=1&", 100)), "")
	call(http.StatusBadRequest, http.MethodGet, renderPath+"?languages=xx-NOPE", "")
	jobs := strings.TrimSuffix(strings.Repeat(`{"template":"syntax"},`, 101), ",")
	call(http.StatusBadRequest, http.MethodPost, "/apis/rendering/v1/branches/4/renderBatch", `{"jobs":[`+jobs+`]}`)
	call(http.StatusBadRequest, http.MethodPost, "/apis/rendering/v1/branches/4/renderBatch", `{"jobs":[]}`)
}
