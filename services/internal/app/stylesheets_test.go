package app

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/stylesheets"
)

// The stylesheet operations end to end on both setups: app-styles.css,
// app-fonts.css and {objectId}.css built from objects written through
// Management a moment before (the Management view, no indexing wait),
// with their ETag / 304, 404s, injection attempts neutralised, and every
// answer checked against the served Rendering document. Then the render
// cache in front of them (runSheetCacheScenario).

func TestStylesheetsEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	base, _ := startStoppable(t, cfg)
	runStylesheetsScenario(t, base)
	runSheetCacheScenario(t, base)
}

func TestStylesheetsDistributed(t *testing.T) {
	configFor, _ := isolatedDistributed(t, "stylesheets")
	base, _ := startStoppable(t, configFor(TargetAll))
	runStylesheetsScenario(t, base)
	runSheetCacheScenario(t, base)
}

func runStylesheetsScenario(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	doc := loadRenderingDoc(t)
	get := func(want int, path string, hdr ...string) httpResult {
		t.Helper()
		r := admin.must(want, http.MethodGet, path, "", hdr...)
		doc.check(t, http.MethodGet, path, "", r)
		if want == http.StatusOK && r.header.Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", path, r.header.Get("Content-Type"))
		}
		return r
	}
	id := func(w write, i int) string { return strconv.FormatInt(w.CreatedObjectIDs[i], 10) }

	// A font file: an upload committed in one chunk and a binary proxy
	// object naming it.
	font := make([]byte, 1000)
	_, _ = rand.Read(font)
	up := filesClient{t: t, base: base}.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, font, "Extension", "woff2", "Commit", "true")
	if up.GUID == nil {
		t.Fatalf("upload: %+v", up)
	}
	w := admin.create(obj(0, "fontFile", v(1000, 201, "Font file"), v(5009, 0, true)))
	w = admin.create(obj(w.CreatedObjectIDs[0], "", v(1000, 201, "Open Sans Regular"), v(11000, 0, *up.GUID), v(11005, 0, ".woff2")))
	bpo := w.CreatedObjectIDs[0]

	// Font families (one hostile), a text alignment, paragraph styles
	// (one hostile), font faces and two stylesheet objects.
	hostileName := `x"; } body { background: url(javascript:alert(1)) } .a{`
	fam := admin.create(
		obj(content.TypeFontFamily, "bodyFont", v(1000, 201, "Body"), v(content.AttrFontFamilyName, 0, "Open Sans"), v(content.AttrFontFamilyGeneric, 0, "sans-serif")),
		obj(content.TypeFontFamily, "", v(1000, 201, "Evil"), v(content.AttrFontFamilyName, 0, hostileName), v(content.AttrFontFamilyGeneric, 0, "serif; color: red")))
	align := admin.create(obj(content.TypeTextAlignment, "", v(1000, 201, "Centered"), v(content.AttrTextAlignmentValue, 0, "center")))
	admin.create(
		obj(content.TypeParagraphStyle, "heading", v(1000, 201, "Heading"),
			v(content.AttrParagraphStyleFontFamily, 0, fam.CreatedObjectIDs[0]), v(content.AttrParagraphStyleFontSize, 0, 18.5),
			v(content.AttrParagraphStyleLineHeight, 0, 1.2), v(content.AttrParagraphStyleColor, 0, "#336699"),
			v(content.AttrParagraphStyleTextAlignment, 0, align.CreatedObjectIDs[0]), v(content.AttrParagraphStyleFontWeight, 0, 700),
			v(content.AttrParagraphStyleItalic, 0, true)),
		obj(content.TypeParagraphStyle, "", v(1000, 201, "Evil style"),
			v(content.AttrParagraphStyleColor, 0, "red;} body{background:url(javascript:alert(1))}"), v(content.AttrParagraphStyleFontFamily, 0, fam.CreatedObjectIDs[1])))
	admin.create(obj(content.TypeFontFace, "", v(1000, 201, "Open Sans italic"), v(content.AttrFontFaceFamily, 0, fam.CreatedObjectIDs[0]),
		v(content.AttrFontFaceFile, 0, bpo), v(content.AttrFontFaceWeight, 0, 400), v(content.AttrFontFaceStyle, 0, "italic")))
	sheetSrc := ".teaser { color: #c00; }\n@media print { .teaser { display: none } }\n"
	sheets := admin.create(
		obj(content.TypeCascadingStyleSheet, "", v(1000, 201, "Site"), v(content.AttrStyleSheetSource, 0, sheetSrc)),
		obj(content.TypeCascadingStyleSheet, "", v(1000, 201, "Evil sheet"), v(content.AttrStyleSheetSource, 0, "a{}</style><script>alert(1)</script>")),
		obj(content.TypeCascadingStyleSheet, "", v(1000, 201, "Escaped evil"), v(content.AttrStyleSheetSource, 0, `a { background: url("j\61vascript:alert(1)") }`)))

	// app-styles.css
	const stylesPath = "/apis/rendering/v1/branches/4/css/app-styles.css"
	r := get(http.StatusOK, stylesPath)
	css := string(r.body)
	for _, want := range []string{
		`.bodyFont { font-family: "Open Sans", sans-serif; }`,
		".ta-" + id(align, 0) + " { text-align: center; }",
		`.heading { font-family: "Open Sans", sans-serif; font-size: 18.5pt; line-height: 1.2; color: #336699; text-align: center; font-weight: 700; font-style: italic; }`,
		".ff-" + id(fam, 1) + " { font-family: " + stylesheets.Quote(hostileName) + "; }",
	} {
		if !strings.Contains(css, want) {
			t.Errorf("app-styles.css lacks %q:\n%s", want, css)
		}
	}
	assertNeutralised(t, "app-styles.css", css)
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("app-styles.css has no ETag")
	}
	get(http.StatusNotModified, stylesPath, "If-None-Match", etag)
	// A write shows in the next request (Management view) with a new tag.
	admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"objects":[{"meta":{"id":%s,"typeRef":%d},"values":[%s]}]}`, id(align, 0), content.TypeTextAlignment, v(content.AttrTextAlignmentValue, 0, "right")))
	r = get(http.StatusOK, stylesPath, "If-None-Match", etag)
	if !strings.Contains(string(r.body), "text-align: right;") || r.header.Get("ETag") == etag {
		t.Errorf("after the update: ETag %s (was %s):\n%s", r.header.Get("ETag"), etag, r.body)
	}
	// The path through {file} gives the same sheet.
	if r2 := get(http.StatusOK, "/apis/rendering/v1/branches/draft/css/app-styles.css"); string(r2.body) != string(r.body) {
		t.Errorf("draft alias: a different sheet:\n%s", r2.body)
	}

	// app-fonts.css, whose src serves the font file.
	const fontsPath = "/apis/rendering/v1/branches/4/css/app-fonts.css"
	r = get(http.StatusOK, fontsPath)
	fileURL := stylesheets.FilesPath + *up.GUID + ".woff2"
	want := fmt.Sprintf(`@font-face { font-family: "Open Sans"; src: url(%s) format("woff2"); font-weight: 400; font-style: italic; font-display: swap; }`,
		stylesheets.Quote(fileURL))
	if !strings.Contains(string(r.body), want) {
		t.Errorf("app-fonts.css lacks\n%s\n%s", want, r.body)
	}
	if u, ok := stylesheets.Unquote(stylesheets.Quote(fileURL)); !ok || u != fileURL {
		t.Fatalf("unquote %q", u)
	}
	if f := admin.must(http.StatusOK, http.MethodGet, fileURL, ""); string(f.body) != string(font) {
		t.Errorf("GET %s: %d bytes, not the font", fileURL, len(f.body))
	}
	get(http.StatusNotModified, fontsPath, "If-None-Match", r.header.Get("ETag"))

	// {objectId}.css
	sheetPath := "/apis/rendering/v1/branches/4/css/" + id(sheets, 0) + ".css"
	r = get(http.StatusOK, sheetPath)
	if string(r.body) != sheetSrc {
		t.Errorf("%s = %q, want the source", sheetPath, r.body)
	}
	get(http.StatusNotModified, sheetPath, "If-None-Match", r.header.Get("ETag"))
	for _, i := range []int{1, 2} {
		r = get(http.StatusOK, "/apis/rendering/v1/branches/4/css/"+id(sheets, i)+".css")
		if !strings.HasPrefix(string(r.body), "/* stylesheet "+id(sheets, i)+" withheld") {
			t.Errorf("hostile sheet %d served: %s", i, r.body)
		}
		assertNeutralised(t, "hostile sheet", string(r.body))
	}
	// 404: no such object, another type, a deleted sheet, not {id}.css.
	for _, file := range []string{"999999.css", id(align, 0) + ".css", "abc.css", id(sheets, 0) + ".txt", "-1.css", "99999999999.css"} {
		get(http.StatusNotFound, "/apis/rendering/v1/branches/4/css/"+file)
	}
	admin.must(http.StatusOK, http.MethodDelete, "/apis/cms/v1/branches/4/objects", `{"objectIds":["`+id(sheets, 0)+`"]}`)
	get(http.StatusNotFound, sheetPath)
	get(http.StatusNotFound, "/apis/rendering/v1/branches/999999/css/app-styles.css")
}

// assertNeutralised checks that no value escaped its declaration: braces
// balance, and neither a script URL nor markup appears in plain text.
func assertNeutralised(t *testing.T, name, css string) {
	t.Helper()
	if strings.Count(css, "{") != strings.Count(css, "}") {
		t.Errorf("%s: unbalanced braces:\n%s", name, css)
	}
	for _, bad := range []string{"javascript:", "<script", "</style", "body {", "body{", "color: red"} {
		if strings.Contains(css, bad) {
			t.Errorf("%s holds %q:\n%s", name, bad, css)
		}
	}
}
