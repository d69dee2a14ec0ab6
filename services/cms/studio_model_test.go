package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("model", studioModelJourney)
}

// modelAttr is one attribute the journey adds through the studio.
type modelAttr struct {
	en, de, api, dataType string
	langDep, multi        bool
	max                   int
	targets               bool // the reference's target is the type itself
}

// studioModelJourney: on a child branch, the editor creates a type with an
// ApiIdentifier (an invalid one is refused with the API's message at its
// field), adds an attribute of every data type (a language-dependent
// string, a reference to the type with up to 5 values, a binary, …), sees a
// duplicate ApiIdentifier refused at its field, sets the display-name
// attribute, renames an attribute, and finds a system type read-only while
// the API refuses to delete it or change its ApiIdentifier. The API then
// holds exactly what the studio shows. The dialog keeps Tab inside and
// closes on Escape; axe checks the model view and the dialog.
func studioModelJourney(t *testing.T, s *studioSetup) {
	child := createBranch(t, s.base, "Model work")
	api := fmt.Sprintf("%s/apis/cms/v1/branches/%d", s.base, child)
	p := s.page(t, "editor")
	p.login()
	p.open(fmt.Sprintf("/studio/b/%d/model", child))
	// Other journeys may have created types on the default branch, which
	// this child inherits: the empty state shows only when there is none.
	p.waitFor("the model view", `document.body.innerText.includes("Start the model") || !!document.querySelector(".type-nav a, .rail a")`)
	p.shot("model-start")
	p.checkAccessibility("the model view")

	// The dialog: focus starts in it, Tab stays in it, Escape closes it.
	p.click("New type")
	p.waitFor("the type dialog", `!!document.querySelector("dialog[open]") && document.querySelector("dialog[open]").contains(document.activeElement)`)
	p.checkAccessibility("the new-type dialog")
	for i := 0; i < 9; i++ {
		p.step("Tab", studioWait, chromedp.KeyEvent(kb.Tab))
		if !studioEval[bool](p, `document.querySelector("dialog[open]").contains(document.activeElement)`) {
			t.Fatalf("Tab %d left the dialog: the focus is on %s", i+1, studioEval[string](p, `document.activeElement.outerHTML.slice(0, 120)`))
		}
	}
	p.step("Shift+Tab", studioWait, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	if !studioEval[bool](p, `document.querySelector("dialog[open]").contains(document.activeElement)`) {
		t.Fatalf("Shift+Tab left the dialog")
	}
	p.step("Escape", studioWait, chromedp.KeyEvent(kb.Escape))
	p.waitFor("Escape closes the dialog", `!document.querySelector("dialog[open]")`)

	// An invalid ApiIdentifier: the API's message at the field.
	p.click("New type")
	p.fill("Name (English (United States))", "Product")
	p.fill("Name (German (Germany))", "Produkt")
	p.fill("ApiIdentifier", "1product")
	p.shot("new-type")
	p.click("Create type")
	p.waitFor("the API's refusal at the ApiIdentifier", `(document.querySelector("#type-api-error")?.textContent || "").includes("character '1' not allowed at 0")`)
	p.shot("invalid-api-identifier")
	p.fill("ApiIdentifier", "product")
	p.click("Create type")
	p.waitFor("the type is open", `location.pathname.endsWith("/model/product") && !document.querySelector("dialog[open]") && document.querySelector(".pane-title")?.textContent === "Product"`)
	typeID := objectID(t, api, "product")

	attrs := []modelAttr{
		{en: "Title", de: "Titel", api: "title", dataType: "String", langDep: true},
		{en: "Summary", de: "Kurzfassung", api: "summary", dataType: "TextRef", langDep: true},
		{en: "Body", de: "Text", api: "body", dataType: "XmlRef.SimpleHtml", langDep: true},
		{en: "Stock", de: "Bestand", api: "stock", dataType: "Integer"},
		{en: "Price", de: "Preis", api: "price", dataType: "Decimal"},
		{en: "Weight", de: "Gewicht", api: "weight", dataType: "Float"},
		{en: "Available", de: "Verfügbar", api: "available", dataType: "Boolean"},
		{en: "Launch", de: "Start", api: "launch", dataType: "DateTime"},
		{en: "Release date", de: "Erscheinungsdatum", api: "releaseDate", dataType: "DateTime.Date"},
		{en: "Related", de: "Verwandt", api: "related", dataType: "ObjRef", multi: true, max: 5, targets: true},
		{en: "Image", de: "Bild", api: "image", dataType: "BinRef"},
	}
	for i, a := range attrs {
		p.click("New attribute")
		p.waitFor("the attribute dialog", `!!document.querySelector("dialog[open] #attr-form")`)
		if i == 0 {
			p.checkAccessibility("the new-attribute dialog")
		}
		p.fill("Name (English (United States))", a.en)
		p.fill("Name (German (Germany))", a.de)
		p.fill("ApiIdentifier", a.api)
		p.step("pick "+a.dataType, studioWait, chromedp.Click(chromedp.JSPath(fmt.Sprintf(`document.querySelector('input[name=dataType][value=%q]')`, a.dataType)), chromedp.NodeVisible))
		if a.targets {
			p.clickLabel("Product")
		}
		if a.multi {
			p.clickLabel("Several values")
			p.fill("At most (0 = no limit)", strconv.Itoa(a.max))
		}
		if a.langDep {
			p.clickLabel("Language dependent")
		}
		if a.targets || i == 0 {
			p.shot("attribute-" + a.api)
		}
		p.click("Add attribute")
		p.waitFor("the table lists "+a.en, fmt.Sprintf(`!document.querySelector("dialog[open]") && document.querySelectorAll(".attr-table tbody tr").length === %d && `+
			`[...document.querySelectorAll(".attr-table tbody th")].some(th => th.textContent === %q)`, i+1, a.en))
	}
	p.shot("all-attributes")
	p.checkAccessibility("the type with its attributes")

	// A duplicate ApiIdentifier: refused by the API, shown at the field.
	p.click("New attribute")
	p.fill("Name (English (United States))", "Title again")
	p.fill("ApiIdentifier", "title")
	p.step("pick String", studioWait, chromedp.Click(chromedp.JSPath(`document.querySelector('input[name=dataType][value=String]')`), chromedp.NodeVisible))
	p.click("Add attribute")
	p.waitFor("the duplicate refused at the ApiIdentifier", `(document.querySelector("#attr-api-error")?.textContent || "").includes('apiIdentifier "title" is already used by object')`)
	p.shot("duplicate-api-identifier")
	p.step("Escape", studioWait, chromedp.KeyEvent(kb.Escape))
	p.waitFor("Escape closes the dialog", `!document.querySelector("dialog[open]")`)

	// The display-name attribute, then a rename.
	p.step("choose the display-name attribute", studioWait, chromedp.Evaluate[chromedp.Void](`(() => {
		const s = document.querySelector("#type-dn");
		s.value = [...s.options].find(o => o.textContent === "Title").value;
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`))
	p.waitFor("the badge marks the display-name attribute", `[...document.querySelectorAll(".attr-table tbody th")].some(th => th.textContent.startsWith("Title") && !!th.querySelector(".badge"))`)
	p.click("Edit Title")
	p.waitFor("the edit dialog", `document.querySelector("dialog[open] input[name=dataType][value=String]")?.disabled === true`)
	p.fill("Name (English (United States))", "Headline")
	p.shot("rename-attribute")
	p.click("Save")
	p.waitFor("the table shows the new name", `!document.querySelector("dialog[open]") && [...document.querySelectorAll(".attr-table tbody th")].some(th => th.textContent.startsWith("Headline"))`)
	p.shot("renamed")

	// The type's German name changes; an attribute leaves the type after a question.
	p.click("Edit type")
	p.fill("Name (German (Germany))", "Artikel")
	p.click("Save")
	p.waitFor("the new German name", `!document.querySelector("dialog[open]") && document.querySelector(".names").textContent.includes("Artikel")`)
	p.click("New attribute")
	p.fill("Name (English (United States))", "Obsolete")
	p.fill("ApiIdentifier", "obsolete")
	p.step("pick String", studioWait, chromedp.Click(chromedp.JSPath(`document.querySelector('input[name=dataType][value=String]')`), chromedp.NodeVisible))
	p.click("Add attribute")
	p.waitFor("the table lists Obsolete", fmt.Sprintf(`!document.querySelector("dialog[open]") && document.querySelectorAll(".attr-table tbody tr").length === %d`, len(attrs)+1))
	obsolete := objectID(t, api, "obsolete")
	p.click("Remove Obsolete from the type")
	p.waitFor("the question", `(document.querySelector("dialog[open]")?.textContent || "").includes("Remove “Obsolete” from this type?")`)
	p.shot("remove-attribute")
	p.checkAccessibility("the remove question")
	p.step("confirm", studioWait, chromedp.Click(chromedp.JSPath(`document.querySelector("dialog[open] .btn-danger")`), chromedp.NodeVisible))
	p.waitFor("Obsolete is off the table", fmt.Sprintf(`!document.querySelector("dialog[open]") && document.querySelectorAll(".attr-table tbody tr").length === %d`, len(attrs)))

	// What the studio shows is what the API stores.
	typ := getObject(t, api, "product")
	if got := typ.str(1000, 201); got != "Product" || typ.str(1000, 202) != "Artikel" {
		t.Errorf("the type's names: %q / %q", got, typ.str(1000, 202))
	}
	forms := typ.refs(5002)
	if len(forms) != 1 {
		t.Fatalf("the type has the detail forms %v, want one", forms)
	}
	form := getObject(t, api, strconv.FormatInt(forms[0], 10))
	ids := form.refs(5053)
	if len(ids) != len(attrs) {
		t.Fatalf("the form lists %d attributes, want %d", len(ids), len(attrs))
	}
	if slices.Contains(ids, obsolete) || getObject(t, api, "obsolete").Meta.ID != obsolete {
		t.Errorf("the removed attribute %d: still on the form %v, or its definition gone", obsolete, ids)
	}
	shown := studioEval[[]string](p, `[...document.querySelectorAll(".attr-table tbody tr")].map(r => r.dataset.attribute + "|" + r.querySelector("th").firstChild.textContent + "|" + r.querySelector("code").textContent)`)
	for i, a := range attrs {
		o := getObject(t, api, strconv.FormatInt(ids[i], 10))
		name := a.en
		if a.api == "title" {
			name = "Headline"
		}
		if o.Meta.APIIdentifier != a.api || o.str(1001, 0) != a.dataType || o.str(1000, 201) != name || o.str(1000, 202) != a.de ||
			o.flag(1017) != a.langDep || o.flag(1004) != a.multi {
			t.Errorf("attribute %d as stored: %+v, want %+v", ids[i], o, a)
		}
		if a.max > 0 && o.num(1014) != int64(a.max) {
			t.Errorf("attribute %s: max values %d, want %d", a.api, o.num(1014), a.max)
		}
		if a.targets && !slices.Equal(o.refs(1015), []int64{typeID}) {
			t.Errorf("attribute %s: target types %v, want [%d]", a.api, o.refs(1015), typeID)
		}
		if want := fmt.Sprintf("%d|%s|%s", ids[i], name, a.api); i >= len(shown) || shown[i] != want {
			t.Errorf("row %d shows %q, the API stores %q", i, nth(shown, i), want)
		}
		if a.api == "title" && typ.num(5005) != ids[i] {
			t.Errorf("the display-name attribute is %d, want %d (title)", typ.num(5005), ids[i])
		}
	}

	// A system type: read-only in the studio, and the API refuses changes.
	p.open(fmt.Sprintf("/studio/b/%d/model/typeLanguage", child))
	p.waitText("System type: read-only")
	p.waitFor("the system type's model", `!!document.querySelector("#type-dn")`)
	for _, b := range []string{"Edit type", "New attribute"} {
		if studioEval[bool](p, fmt.Sprintf(`!!(%s)`, button(b))) {
			t.Errorf("the system type offers %q", b)
		}
	}
	if !studioEval[bool](p, `document.querySelector("#type-dn").disabled`) {
		t.Errorf("the system type's display-name attribute can be changed")
	}
	p.shot("system-type")
	p.checkAccessibility("a system type")
	b := mustCall(t, http.StatusBadRequest, http.MethodDelete, api+"/objects", `{"objectIds":["typeLanguage"]}`)
	if !strings.Contains(string(b), "protected system object") {
		t.Errorf("deleting a system type: %s", b)
	}
	b = mustCall(t, http.StatusForbidden, http.MethodPatch, api+"/objects", `{"objects":[{"meta":{"id":20,"apiIdentifier":"myLanguage"}}]}`)
	if !strings.Contains(string(b), "cannot change") {
		t.Errorf("changing a system type's ApiIdentifier: %s", b)
	}

	// A reload shows the same model (the URL is the state).
	p.open(fmt.Sprintf("/studio/b/%d/model/product", child))
	p.waitFor("the type after a reload", fmt.Sprintf(`document.querySelectorAll(".attr-table tbody tr").length === %d`, len(attrs)))
	p.shot("after-reload")

	// In German: the same model, every text translated.
	p.step("Deutsch", studioWait, chromedp.Evaluate[chromedp.Void](`(() => {
		const s = [...document.querySelectorAll(".topbar select")].find(x => [...x.options].some(o => o.value === "de"));
		s.value = "de";
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`))
	p.waitFor("the German model", `document.body.innerText.includes("Neues Attribut") && document.body.innerText.includes("Je Sprache") && document.querySelector(".pane-title")?.textContent === "Artikel"`)
	p.shot("german")
	p.checkAccessibility("the model in German")
}

func nth(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// clickLabel clicks the control a label with this text holds or names.
func (p *studioPage) clickLabel(label string) {
	p.t.Helper()
	p.step("click "+label, studioWait, chromedp.Click(labelled(label), chromedp.NodeVisible))
}

// storedObject is a Management object as the API answers it.
type storedObject struct {
	Meta struct {
		ID            int64  `json:"id"`
		APIIdentifier string `json:"apiIdentifier"`
	} `json:"meta"`
	Values []struct {
		Attribute   int64           `json:"attribute"`
		Language    int64           `json:"language"`
		SortReverse int64           `json:"sortReverse"`
		Value       json.RawMessage `json:"value"`
	} `json:"values"`
}

func getObject(t *testing.T, api, id string) storedObject {
	t.Helper()
	var o storedObject
	if err := json.Unmarshal(mustCall(t, http.StatusOK, http.MethodGet, api+"/objects/"+id+"?inherited=true", ""), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func objectID(t *testing.T, api, id string) int64 {
	t.Helper()
	return getObject(t, api, id).Meta.ID
}

func (o storedObject) str(attr, lang int64) string {
	for _, v := range o.Values {
		var s string
		if v.Attribute == attr && v.Language == lang && json.Unmarshal(v.Value, &s) == nil {
			return s
		}
	}
	return ""
}

func (o storedObject) flag(attr int64) bool {
	for _, v := range o.Values {
		if v.Attribute == attr {
			return string(v.Value) == "true"
		}
	}
	return false
}

func (o storedObject) num(attr int64) int64 {
	for _, v := range o.Values {
		if v.Attribute == attr {
			n, _ := strconv.ParseInt(string(v.Value), 10, 64)
			return n
		}
	}
	return 0
}

// refs are the values of a multi-valued reference in their order.
func (o storedObject) refs(attr int64) []int64 {
	type r struct{ sort, id int64 }
	var rs []r
	for _, v := range o.Values {
		if v.Attribute == attr {
			n, _ := strconv.ParseInt(string(v.Value), 10, 64)
			rs = append(rs, r{v.SortReverse, n})
		}
	}
	slices.SortFunc(rs, func(a, b r) int { return int(a.sort - b.sort) })
	out := make([]int64, len(rs))
	for i, x := range rs {
		out[i] = x.id
	}
	return out
}
