package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("fields", studioFieldsJourney)
}

// fieldsModel is what the fields journey creates through the API: an
// author type with two authors, a picture type (binary proxy objects) with
// one uploaded PNG, and the three attributes the fields edit.
type fieldsModel struct {
	authorType, pictureType int64
	authors                 []int64 // Ada Lovelace, Alan Turing
	picture                 int64
	ref, bin, html          int64 // attributes: ObjRef → author, BinRef → picture, XmlRef.SimpleHtml
	pageType, page          int64 // a type whose form lists the three, and one object of it
}

func setupFieldsModel(t *testing.T, base string, branch int64) fieldsModel {
	t.Helper()
	var fm fieldsModel
	create := func(objs ...string) []int64 {
		t.Helper()
		var w writeAnswer
		b := mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch), `{"objects":[`+strings.Join(objs, ",")+`]}`)
		if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != len(objs) {
			t.Fatalf("create: %v: %s", err, b)
		}
		return w.CreatedObjectIDs
	}
	ids := create(`{"meta":{"typeRef":0,"apiIdentifier":"fieldsAuthor"},"values":[`+value(1000, 201, "Author")+`]}`,
		`{"meta":{"typeRef":0,"apiIdentifier":"fieldsPicture"},"values":[`+value(1000, 201, "Picture")+","+value(5009, 0, true)+`]}`)
	fm.authorType, fm.pictureType = ids[0], ids[1]
	fm.authors = create(fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, fm.authorType, value(1000, 201, "Ada Lovelace")),
		fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, fm.authorType, value(1000, 201, "Alan Turing")))
	attr := func(api, name, dt string, target int64) string {
		v := []string{value(1000, 201, name), value(1001, 0, dt), value(1004, 0, false), value(1017, 0, false)}
		if target != 0 {
			v = append(v, value(1015, 0, target))
		}
		return `{"meta":{"typeRef":10,"apiIdentifier":"` + api + `"},"values":[` + strings.Join(v, ",") + `]}`
	}
	ids = create(attr("fieldsAuthorRef", "Author", "ObjRef", fm.authorType), attr("fieldsPictureRef", "Picture", "BinRef", fm.pictureType),
		attr("fieldsBody", "Body", "XmlRef.SimpleHtml", 0))
	fm.ref, fm.bin, fm.html = ids[0], ids[1], ids[2]
	var rows []string
	for i, id := range ids {
		rows = append(rows, fmt.Sprintf(`{"attribute":5053,"language":0,"variant":0,"value":%d,"sortReverse":%d}`, id, i))
	}
	form := create(`{"meta":{"typeRef":50},"values":[` + value(1000, 201, "Page form") + "," + strings.Join(rows, ",") + `]}`)[0]
	fm.pageType = create(`{"meta":{"typeRef":0,"apiIdentifier":"fieldsPage"},"values":[` + value(1000, 201, "Page") + "," + value(5001, 0, form) + `]}`)[0]
	fm.page = create(fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, fm.pageType, value(1000, 201, "About us")))[0]

	// The picture: a PNG uploaded and committed, and its binary proxy object.
	img := image.NewNRGBA(image.Rect(0, 0, 120, 80))
	for y := range 80 {
		for x := range 120 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(2 * x), uint8(3 * y), 160, 255})
		}
	}
	var photo, body bytes.Buffer
	if err := png.Encode(&photo, img); err != nil {
		t.Fatal(err)
	}
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("Extension", ".png")
	_ = mw.WriteField("Commit", "true")
	fw, _ := mw.CreateFormFile("File", "sunset.png")
	_, _ = fw.Write(photo.Bytes())
	_ = mw.Close()
	var up struct {
		GUID string `json:"guid"`
	}
	b := mustCall(t, http.StatusOK, http.MethodPost, base+"/apis/cms/v1/fileUpload", body.String(), "Content-Type", mw.FormDataContentType())
	if err := json.Unmarshal(b, &up); err != nil || up.GUID == "" {
		t.Fatalf("upload: %v: %s", err, b)
	}
	fm.picture = create(fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s,%s]}`, fm.pictureType,
		value(1000, 201, "Sunset"), value(11000, 0, up.GUID), value(11005, 0, ".png")))[0]
	// The index and Delivery see them before the editor searches.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b, _ := call(http.DefaultClient, http.MethodPost, fmt.Sprintf("%s/apis/index/v1/branches/%d/objects", base, branch),
			fmt.Sprintf(`{"filter":{"objectIds":[%d,%d]}}`, fm.authors[1], fm.picture))
		if code == http.StatusOK && strings.Count(string(b), `"id"`) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index does not show the journey's objects: %d %s", code, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fm
}

// studioFieldsJourney: the reference and rich-text inputs in the object
// editor (it needs the object view: f/wsobject). On a branch of its own,
// the editor searches an author in the picker by typing, walks the results
// with the arrow keys and picks with Enter; creates a new author from the
// picker; removes the reference; chooses a picture, whose card shows the
// thumbnail (fetched with the token, shown as a blob: URL); writes rich
// text with the keyboard and the toolbar, is refused a javascript: link in
// words and adds a link; saves: the API holds the XHTML with its <div>
// root and rel="nofollow"; a reload reads it back into the editor. No CSP
// violation happens on the way; axe checks every state.
func studioFieldsJourney(t *testing.T, s *studioSetup) {
	// A branch of its own: the types it creates are no other journey's concern.
	branch := createBranch(t, s.base, "Fields work")
	fm := setupFieldsModel(t, s.base, branch)
	p := s.page(t, "editor")
	p.login()
	openFieldsObject(p, branch, fm)
	p.waitText("No object chosen.")
	// Everything below runs under the studio's CSP: any violation is recorded.
	studioEval[bool](p, `window.cspViolations = []; document.addEventListener("securitypolicyviolation", e => cspViolations.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || ""))); true`)
	p.shot("empty")
	p.checkAccessibility("the empty reference and rich-text fields")

	// The reference picker: type, arrow keys, Enter.
	p.step("open the author picker", studioWait, chromedp.Click(chromedp.CSS(`[id="`+fieldsCell(fm.ref)+`"]`)))
	p.waitText("Choose Author")
	p.pollFor("the search box has the focus", `document.activeElement === document.querySelector(".ref-picker input[type=search]")`)
	p.waitText("Alan Turing")
	p.shot("picker-recent")
	p.checkAccessibility("the reference picker")
	p.fill("Search", "lov")
	p.waitFor("one result", `document.querySelectorAll(".ref-option").length === 1 && document.querySelector(".ref-option").innerText.includes("Ada Lovelace")`)
	p.fill("Search", "a")
	// The answer to "a" (not the latest-changed list shown while the search box was empty): a text
	// change is no DOM mutation waitFor sees, so poll.
	p.pollFor("both authors found", `document.querySelectorAll(".ref-option").length === 2 && document.querySelector(".ref-picker [role=status]").textContent === "2 found"`)
	p.step("arrow down", studioWait, chromedp.SendKeys(chromedp.CSS(`.ref-picker input[type=search]`), kb.ArrowDown))
	p.waitFor("the second result is active", `document.querySelectorAll(".ref-option")[1].getAttribute("aria-selected") === "true" &&
		document.querySelector(".ref-picker input").getAttribute("aria-activedescendant") === document.querySelectorAll(".ref-option")[1].id`)
	second := studioEval[string](p, `document.querySelector(".ref-option[aria-selected=true] .ref-option-name").textContent`)
	p.shot("picker-keyboard")
	p.step("Enter picks", studioWait, typeKeys(kb.Enter))
	name := second
	if name != "Alan Turing" && name != "Ada Lovelace" {
		t.Fatalf("the second result is %q", name)
	}
	p.waitFor("the card shows the picked author", fmt.Sprintf(`!document.querySelector("dialog[open]") && [...document.querySelectorAll(".ref-card")].some(c => c.querySelector("a.ref-name")?.textContent === %q && c.querySelector(".ref-type")?.textContent === "Author")`, name))
	p.shot("picked")

	// Create new from the picker.
	p.click("Change Author")
	p.waitText("Create new…")
	p.click("Create new…")
	p.waitText("Create a new object")
	p.fill("Name", "Grace Hopper")
	p.shot("create-new")
	p.click("Create and choose")
	p.waitFor("the new author is chosen", `!document.querySelector("dialog[open]") && [...document.querySelectorAll(".ref-card a.ref-name")].some(a => a.textContent === "Grace Hopper")`)
	created := studioEval[string](p, `[...document.querySelectorAll(".ref-card a.ref-name")].find(a => a.textContent === "Grace Hopper").pathname.split("/").pop()`)
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%s", s.base, branch, created), "")
	if !strings.Contains(string(b), "Grace Hopper") || !strings.Contains(string(b), fmt.Sprintf(`"typeRef":%d`, fm.authorType)) {
		t.Errorf("the created author: %s", b)
	}
	p.click("Remove Grace Hopper")
	p.waitText("No object chosen.")

	// A picture: the card's thumbnail is a blob: URL that loaded.
	p.step("open the picture picker", studioWait, chromedp.Click(chromedp.CSS(`[id="`+fieldsCell(fm.bin)+`"]`)))
	p.waitText("Sunset")
	p.step("pick", studioWait, typeKeys(kb.Enter))
	p.waitFor("the thumbnail shows", `[...document.querySelectorAll("img.ref-thumb")].some(i => i.src.startsWith("blob:") && i.dataset.loaded === "true" && i.naturalWidth > 0)`)
	p.shot("picture")

	// Rich text: toolbar and shortcuts; the value is XHTML the sanitizer keeps.
	rt := `.rt-content`
	p.waitFor("the rich-text editor loaded", `!!document.querySelector(".rt-content[contenteditable=true]")`)
	p.step("type", studioWait, chromedp.Click(chromedp.CSS(rt)))
	p.step("type", studioWait, chromedp.Click(chromedp.CSS(rt)), typeKeys("Intro "))
	p.step("bold by shortcut", studioWait, chromedp.KeyEvent("b", chromedp.KeyModifiers(chromedp.ModifierCtrl)), typeKeys("strong"),
		chromedp.KeyEvent("b", chromedp.KeyModifiers(chromedp.ModifierCtrl)), typeKeys(kb.Enter))
	p.click("Bulleted list")
	p.step("list items", studioWait, typeKeys("one"+kb.Enter+"two"))
	p.shot("rich-text")
	p.checkAccessibility("the rich-text editor")
	if got := studioEval[string](p, `document.querySelector(".rt-content").innerHTML`); got != "<p>Intro <strong>strong</strong></p><ul><li><p>one</p></li><li><p>two</p></li></ul>" {
		t.Errorf("the editor shows %q", got)
	}
	// A link (Ctrl+K): an address the sanitizer would drop is refused in words.
	p.step("new paragraph", studioWait, typeKeys(kb.Enter+kb.Enter+"See "))
	p.step("link shortcut", studioWait, chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitText("Add link")
	p.fill("Address (URL)", "javascript:alert(1)")
	p.click("Apply")
	p.waitText("This is no address the site can link to")
	p.shot("link-refused")
	p.checkAccessibility("the link dialog")
	p.fill("Address (URL)", "https://example.com/docs?a=1&b=2")
	p.click("Apply")
	p.waitFor("the link is in the text", `!document.querySelector("dialog[open]") && document.querySelector(".rt-content a")?.getAttribute("href") === "https://example.com/docs?a=1&b=2"`)
	p.shot("link")

	// Saved: the stored value is the XHTML the editor showed, with its <div> root and rel="nofollow".
	p.click("Save")
	const stored = `<div><p>Intro <strong>strong</strong></p><ul><li><p>one</p></li><li><p>two</p></li></ul>` +
		`<p>See <a href="https://example.com/docs?a=1&amp;b=2" rel="nofollow">https://example.com/docs?a=1&amp;b=2</a></p></div>`
	var vals map[string]any
	for end := time.Now().Add(studioWait); ; time.Sleep(50 * time.Millisecond) {
		vals = fieldsStored(t, s.base, branch, fm.page)
		if vals[fmt.Sprintf("%d/0", fm.html)] != nil || time.Now().After(end) {
			break
		}
	}
	if got := vals[fmt.Sprintf("%d/0", fm.html)]; got != stored {
		t.Errorf("stored rich text = %q, want %q", got, stored)
	}
	if got, ok := vals[fmt.Sprintf("%d/0", fm.bin)].(float64); !ok || int64(got) != fm.picture {
		t.Errorf("stored picture = %v, want %d", vals[fmt.Sprintf("%d/0", fm.bin)], fm.picture)
	}
	if got := vals[fmt.Sprintf("%d/0", fm.ref)]; got != nil {
		t.Errorf("stored author = %v, want none (removed)", got)
	}
	if v := studioEval[[]string](p, `cspViolations`); len(v) > 0 {
		t.Errorf("CSP violations: %q", v)
	}
	// A reload reads the stored XHTML back into the editor.
	p.step("reload", studioWait, chromedp.Reload())
	p.waitFor("the stored text is in the editor", `document.querySelector(".rt-content a")?.textContent === "https://example.com/docs?a=1&b=2"`)
	p.waitFor("the picture again", `[...document.querySelectorAll("img.ref-thumb")].some(i => i.dataset.loaded === "true")`)
	p.shot("reloaded")
}

// pollFor waits until the JavaScript condition holds, evaluating it every
// 20 ms (waitFor evaluates on DOM mutations; a changed text is none).
func (p *studioPage) pollFor(what, cond string) {
	p.t.Helper()
	for end := time.Now().Add(studioWait); !studioEval[bool](p, cond); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			p.shot("failed-" + what)
			p.t.Fatalf("%s: not within %s\npage: %s", what, studioWait, p.text())
		}
	}
}

// fieldsCell is the id of the object editor's input of a language
// independent attribute (the editor's f-{attribute}-{language}-{variant}).
func fieldsCell(attr int64) string { return fmt.Sprintf("f-%d-0-0", attr) }

// fieldsStored reads the values stored on branch for object id, keyed "attribute/language".
func fieldsStored(t *testing.T, base string, branch, id int64) map[string]any {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%d", base, branch, id), "")
	var o struct {
		Values []struct {
			Attribute, Language int64
			Value               any
		}
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("read object %d: %v: %s", id, err, b)
	}
	out := map[string]any{}
	for _, v := range o.Values {
		out[fmt.Sprintf("%d/%d", v.Attribute, v.Language)] = v.Value
	}
	return out
}

// openFieldsObject opens the page object in the object editor.
func openFieldsObject(p *studioPage, branch int64, fm fieldsModel) {
	p.open(fmt.Sprintf("/studio/b/%d/content/%d/%d", branch, fm.pageType, fm.page))
}

// typeKeys is chromedp.KeyEvent but for Enter: a browser sends no
// keypress for a keydown the page handled (the editor splits the block
// itself), while CDP would send the char and split it again.
func typeKeys(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, r := range text {
			for _, k := range kb.Encode(r) {
				// Enter: a page that handles the keydown (the editor splits the
				// block) gets no keypress in a browser; CDP would send the char.
				if r == '\r' && k.Type == kb.KeyChar {
					continue
				}
				if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
