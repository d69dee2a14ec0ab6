package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/codegen/codegentest"
	"github.com/cmsplatform/cms/pkg/openapitest"
)

// Wire fidelity with NovaDB (issue 28 items 3-5), on both setups: binary
// proxy objects carry the file name, media type and thumbnail props of
// NovaDB's Delivery answers; the code generator serves types without an
// ApiIdentifier when they are named; string answers are raw text unless
// JSON is explicitly accepted. Every exchange is validated against NovaDB's
// document where it describes it and against the served one.

// TestWireFidelityEmbedded runs the scenarios on `cms run`.
func TestWireFidelityEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	filesConfig(&cfg)
	runWireFidelity(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

// TestWireFidelityDistributed runs them on PostgreSQL, NATS,
// Elasticsearch and Redis.
func TestWireFidelityDistributed(t *testing.T) {
	configFor, _ := isolatedDistributed(t, "wire")
	cfg := configFor(TargetAll)
	filesConfig(&cfg)
	runWireFidelity(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

func runWireFidelity(t *testing.T, base string) {
	w := wireClient{httpClient: httpClient{t, base, "admin", "test-password"}, novadb: managementDoc(t),
		served: loadServedDoc(t, "Management")}
	t.Run("StringAnswers", func(t *testing.T) { w.with(t).stringAnswers() })
	t.Run("CodegenUnnamedTypes", func(t *testing.T) { w.with(t).codegenUnnamedTypes() })
	t.Run("BinaryProxyProps", func(t *testing.T) { w.with(t).binaryProxyProps() })
}

// wireClient checks Management exchanges against NovaDB's document and the
// served one.
type wireClient struct {
	httpClient
	novadb *openapitest.Document
	served servedDoc
}

func (w wireClient) with(t *testing.T) wireClient { w.t = t; return w }

// get sends a GET with the headers; a 200 is checked against the served
// document, and against NovaDB's when it is JSON (NovaDB's document
// declares application/json only).
func (w wireClient) get(want int, path string, hdr ...string) httpResult {
	w.t.Helper()
	r := w.must(want, http.MethodGet, path, "", hdr...)
	req, _ := http.NewRequest(http.MethodGet, "http://cms.test"+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp := &http.Response{StatusCode: r.code, Header: r.header}
	if r.code != http.StatusNotModified {
		w.served.validate(w.t, req, nil, resp, r.body)
	}
	if strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.code >= 400 {
		if err := w.novadb.ValidateResponse(req, nil, resp, r.body); err != nil {
			w.t.Errorf("GET %s: the answer breaks NovaDB's document: %v\n%.300s", path, err, r.body)
		}
	}
	return r
}

// stringAnswers: both generator operations answer the raw source for
// Accept */*, text/*, text/plain and no Accept at all, and the JSON string
// when JSON is explicitly accepted; each representation has its own ETag
// (Vary: Accept) and a 304 for it.
func (w wireClient) stringAnswers() {
	t := w.t
	w.create(obj(0, "wireArticle", v(1000, 201, "Article")))
	for _, path := range []string{"/apis/cms/v1/branches/4/generators/csharp/types?ids=wireArticle",
		"/apis/cms/v1/branches/4/generators/csharp/types/wireArticle"} {
		js := w.get(http.StatusOK, path, "Accept", "application/json")
		var src string
		if err := json.Unmarshal(js.body, &src); err != nil || !strings.Contains(src, "public partial class WireArticle") {
			t.Fatalf("%s with Accept application/json: not the JSON string of the source (%v): %.300s", path, err, js.body)
		}
		if ct := js.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: JSON answer as %q", path, ct)
		}
		for _, accept := range []string{"*/*", "", "text/plain", "text/*", "text/plain, application/json;q=0.9",
			"application/json;q=0.5, */*"} {
			var hdr []string
			if accept != "" {
				hdr = []string{"Accept", accept}
			}
			raw := w.get(http.StatusOK, path, hdr...)
			if string(raw.body) != src || !strings.HasPrefix(raw.header.Get("Content-Type"), "text/plain") {
				t.Errorf("%s with Accept %q: %s, want the raw source:\n%.300s", path, accept, raw.header.Get("Content-Type"), raw.body)
			}
			if raw.header.Get("Vary") != "Accept" || raw.header.Get("ETag") == "" || raw.header.Get("ETag") == js.header.Get("ETag") {
				t.Errorf("%s with Accept %q: Vary %q, ETag %q (JSON's %q)", path, accept, raw.header.Get("Vary"),
					raw.header.Get("ETag"), js.header.Get("ETag"))
			}
			w.get(http.StatusNotModified, path, append(hdr, "If-None-Match", raw.header.Get("ETag"))...)
		}
		// Explicitly accepted JSON wins (axios sends this).
		for _, accept := range []string{"application/json, text/plain, */*", "application/json; charset=utf-8"} {
			r := w.get(http.StatusOK, path, "Accept", accept)
			if string(r.body) != string(js.body) || r.header.Get("ETag") != js.header.Get("ETag") {
				t.Errorf("%s with Accept %q: %s %.100s, want the JSON string", path, accept, r.header.Get("Content-Type"), r.body)
			}
		}
		w.get(http.StatusNotModified, path, "Accept", "application/json", "If-None-Match", js.header.Get("ETag"))
	}
	// Errors stay ProblemDetails whatever Accept says.
	for _, accept := range []string{"*/*", "text/plain"} {
		r := w.get(http.StatusBadRequest, "/apis/cms/v1/branches/4/generators/cobol/types/wireArticle", "Accept", accept)
		if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("400 with Accept %q: %s", accept, r.header.Get("Content-Type"))
		}
	}
}

// codegenUnnamedTypes: a type created without an ApiIdentifier generates in
// both languages when named (ids=<id> and /types/<id>), its class named
// from its display name and kept apart from the type with the ApiIdentifier
// of the same name; ids=all leaves it out. The C# compiles, and the
// TypeScript type-checks the real Delivery answer for an object of it.
func (w wireClient) codegenUnnamedTypes() {
	t := w.t
	label := w.create(obj(10, "wireLabel", v(1001, 0, "String"))).CreatedObjectIDs[0]
	w.create(obj(0, "wireGadget", v(1000, 201, "Gadget")))
	typ := w.create(obj(0, "", v(1000, 201, "Wire gadget"))).CreatedObjectIDs[0]
	made := w.create(obj(typ, "", v(label, 0, "Hello")))
	class := "WireGadget_" + strconv.FormatInt(typ, 10)
	str := func(r httpResult) string {
		t.Helper()
		var s string
		if err := json.Unmarshal(r.body, &s); err != nil {
			t.Fatalf("not a JSON string: %v: %.200s", err, r.body)
		}
		return s
	}
	cs := str(w.get(http.StatusOK, fmt.Sprintf("/apis/cms/v1/branches/4/generators/csharp/types?ids=%d,wireGadget", typ), "Accept", "application/json"))
	for _, want := range []string{"public partial class " + class + "\n", "public partial class WireGadget\n",
		"public const string TypeApiIdentifier = null;", "public string WireLabel { get; set; }"} {
		if !strings.Contains(cs, want) {
			t.Errorf("C# for ids=%d,wireGadget lacks %q:\n%s", typ, want, cs)
		}
	}
	ts := str(w.get(http.StatusOK, fmt.Sprintf("/apis/cms/v1/branches/4/generators/typescript/types/%d", typ), "Accept", "application/json"))
	if !strings.Contains(ts, "export type "+class+" = CmsObject<\"\", "+class+"Props>;") || !strings.Contains(ts, "  wireLabel?: string;") {
		t.Errorf("TypeScript for /types/%d:\n%s", typ, ts)
	}
	all := str(w.get(http.StatusOK, "/apis/cms/v1/branches/4/generators/csharp/types", "Accept", "application/json"))
	if strings.Contains(all, class) || !strings.Contains(all, "class WireGadget\n") {
		t.Errorf("ids=all: %s must be left out, WireGadget in", class)
	}
	one := w.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/4/types/%d/objects/%d", typ, made.CreatedObjectIDs[0]), "",
		"X-Cms-Min-Version", strconv.FormatInt(made.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	codegentest.CompileCSharp(t, map[string]string{"Models.cs": cs})
	codegentest.CompileTypeScript(t, map[string]string{"models.ts": ts,
		"answer.ts": "import type { " + class + "Result } from \"./models\";\n\nexport const one: " + class + "Result = " + string(one.body) + ";\n"})
}

// binaryProxyProps: a BPO in Delivery carries externalBinaryFileName (as
// stored, else from its name), externalBinaryMediaType (the media type
// object of the extension, resolvable) and externalBinaryThumbnail (the
// id its thumbnail is served by; none for a file without thumbnail) with
// the keys and JSON kinds of NovaDB's recorded answers, also when the
// type's form lists only the hash and the extension. The uploads are
// checked against NovaDB's document, the Delivery answers against the
// served one.
func (w wireClient) binaryProxyProps() {
	t := w.t
	files := filesClient{t: t, base: w.base, doc: w.novadb}
	var photo bytes.Buffer
	if err := png.Encode(&photo, image.NewNRGBA(image.Rect(0, 0, 40, 30))); err != nil {
		t.Fatal(err)
	}
	png := files.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, photo.Bytes(), "Extension", ".png", "Commit", "true")
	pdf := files.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, []byte("%PDF-1.4 wire"), "Extension", "pdf", "Commit", "true")
	// The type's form lists the hash and the extension only.
	form := w.create(obj(50, "", v(5053, 0, 11000, 0), v(5053, 0, 11005, 1))).CreatedObjectIDs[0]
	typ := w.create(obj(0, "wireImage", v(1000, 201, "Image"), v(5009, 0, true), v(5001, 0, form))).CreatedObjectIDs[0]
	made := w.create(
		obj(typ, "wirePhoto", v(1000, 201, "Team photo"), v(11000, 0, *png.GUID), v(11005, 0, ".png")),
		obj(typ, "wireUploaded", v(1000, 201, "Other"), v(11000, 0, *png.GUID), v(11005, 0, ".png"), v(11001, 0, "IMG_0042.PNG")),
		obj(typ, "wireManual", v(1000, 201, "manual.PDF"), v(11000, 0, *pdf.GUID), v(11005, 0, "pdf")))
	wait := []string{"X-Cms-Min-Version", strconv.FormatInt(made.Transaction.ID, 10), "X-Cms-Max-Wait", "30s"}
	deliv := loadServedDoc(t, "Delivery")
	get := func(path string) httpResult {
		t.Helper()
		r := w.must(http.StatusOK, http.MethodGet, path, "", wait...)
		deliv.check(t, http.MethodGet, path, "", r)
		return r
	}
	type bpo struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
		DisplayName string                     `json:"displayName"`
		Props       map[string]json.RawMessage `json:"props"`
	}
	var list struct {
		Objs []bpo `json:"objs"`
		Refs []bpo `json:"refs"`
	}
	r := get("/delivery/api/branches/4/types/wireImage/objects?take=10&sort=id&resolve=externalBinaryMediaType")
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Objs) != 3 {
		t.Fatalf("list of BPOs (%v): %s", err, r.body)
	}
	want := []map[string]any{
		{"externalBinaryFileName": "Team photo.png", "externalBinaryThumbnail": float64(made.CreatedObjectIDs[0]), "mime": "image/png"},
		{"externalBinaryFileName": "IMG_0042.PNG", "externalBinaryThumbnail": float64(made.CreatedObjectIDs[1]), "mime": "image/png"},
		{"externalBinaryFileName": "manual.PDF", "mime": "application/pdf"},
	}
	mediaNames := map[float64]string{}
	for _, ref := range list.Refs {
		mediaNames[float64(ref.Meta.ID)] = ref.DisplayName
	}
	recorded := recordedBPOKinds(t)
	for i, o := range list.Objs {
		got := map[string]any{}
		for k, raw := range o.Props {
			var x any
			_ = json.Unmarshal(raw, &x)
			got[k] = x
		}
		for k, x := range want[i] {
			if k == "mime" {
				if mt, ok := got["externalBinaryMediaType"].(float64); !ok || mediaNames[mt] != x {
					t.Errorf("%s: externalBinaryMediaType %v resolves to %q, want %q (refs %v)", o.DisplayName, got["externalBinaryMediaType"], mediaNames[mt], x, mediaNames)
				}
				continue
			}
			if got[k] != x {
				t.Errorf("%s: %s = %v, want %v", o.DisplayName, k, got[k], x)
			}
		}
		if _, ok := got["externalBinaryThumbnail"]; ok != (i < 2) {
			t.Errorf("%s: externalBinaryThumbnail present = %v", o.DisplayName, ok)
		}
		// The keys and JSON kinds of NovaDB's recorded BPO props.
		for k, raw := range o.Props {
			if kind, ok := recorded[k]; ok && jsonKind(raw) != kind {
				t.Errorf("%s: %s is a JSON %s, NovaDB records a %s", o.DisplayName, k, jsonKind(raw), kind)
			}
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range o.Props {
				if strings.HasPrefix(k, "externalBinary") && !yield(k) {
					return
				}
			}
		})
		wantKeys := []string{"externalBinaryFileExtension", "externalBinaryFileName", "externalBinaryMD5", "externalBinaryMediaType"}
		if i < 2 {
			wantKeys = append(wantKeys, "externalBinaryThumbnail")
			slices.Sort(wantKeys)
		}
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("%s: props %v, want %v", o.DisplayName, keys, wantKeys)
		}
	}
	// The thumbnail reference serves the thumbnail; the name and extension
	// build the file's URL.
	thumb := fmt.Sprintf("/delivery/api/branches/4/thumbnails/%v", want[0]["externalBinaryThumbnail"])
	if resp, _ := files.get(thumb, http.StatusOK); !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
		t.Errorf("GET %s: %s", thumb, resp.Header.Get("Content-Type"))
	}
	files.get("/delivery/api/files/"+*png.GUID+".png", http.StatusOK)
	// One object: the same props.
	var one struct{ Obj bpo }
	r = get("/delivery/api/branches/4/objects/wirePhoto")
	if err := json.Unmarshal(r.body, &one); err != nil || string(one.Obj.Props["externalBinaryFileName"]) != `"Team photo.png"` {
		t.Errorf("single BPO (%v): %s", err, r.body)
	}
}

// recordedBPOKinds returns the JSON kind of every externalBinary* prop in
// NovaDB's recorded Delivery answers (services/delivery/testdata/mocks).
func recordedBPOKinds(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../../delivery/testdata/mocks/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("mocks: %v", err)
	}
	out := map[string]string{}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if props, ok := x["props"].(map[string]any); ok {
				for k, val := range props {
					if strings.HasPrefix(k, "externalBinary") {
						b, _ := json.Marshal(val)
						out[k] = jsonKind(b)
					}
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		walk(doc)
	}
	for _, k := range []string{"externalBinaryFileName", "externalBinaryMediaType", "externalBinaryThumbnail", "externalBinaryMD5"} {
		if out[k] == "" {
			t.Fatalf("the recorded answers have no %s", k)
		}
	}
	return out
}

// jsonKind is "string", "number", "array", "object", "boolean" or "null".
func jsonKind(raw []byte) string {
	var x any
	_ = json.Unmarshal(raw, &x)
	switch x.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case bool:
		return "boolean"
	}
	return "null"
}
