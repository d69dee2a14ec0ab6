package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

func init() {
	addStudioJourney("preview", studioPreviewJourney)
}

// previewFrame is the JavaScript for the preview frame's document source
// (the frame itself is an opaque origin the page cannot read).
const previewFrame = `(document.querySelector("iframe.preview-frame")?.srcdoc ?? "")`

// previewShown is the JavaScript that is true once the frame has loaded its
// latest document (for the screenshot).
const previewShown = `(() => { const f = document.querySelector("iframe.preview-frame"); return !!f && f.dataset.loaded === f.dataset.key; })()`

// studioPreviewJourney: the open object's preview. A template (type 150)
// written through the API prints the object's teaser and the render
// language; the editor opens the object, opens the preview (a lazy chunk)
// and sees it rendered in a sandboxed frame that runs none of the
// template's script and whose document the studio cannot reach; a saved
// teaser shows in the preview after the save; the preview in German shows
// the German teaser; the Delivery JSON link names the object's Delivery
// address, which answers its JSON; a template that does not compile shows
// the API's problem with its line; a reload keeps template and language.
func studioPreviewJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Preview work")
	typeID, objID, teaser := setupTeaserModel(t, s.base, branch, "pv", "pvnote", "Preview note", "Launch note", "Plan teaser")
	src := `<h1>{{value .Object "pvTeaser"}}</h1><p>Language: {{.Language}}</p>` +
		`<script>parent.document.title = "ran"; document.body.append("script ran")</script>`
	tpl := createObjects(t, s.base, branch, `{"meta":{"typeRef":150,"apiIdentifier":"pvPage"},"values":[`+
		value(1000, 201, "Note page")+","+value(1280, 0, src)+"]}")[0]
	broken := createObjects(t, s.base, branch, `{"meta":{"typeRef":150},"values":[`+
		value(1000, 201, "Teaser broken")+","+value(1280, 0, `<p>{{if}}</p>`)+"]}")[0]
	tx := writeOn(t, http.MethodPatch, s.base, branch, fmt.Sprintf(`{"meta":{"id":%d},"values":[%s]}`, objID, value(teaser, 202, "Plan-Anreißer")))
	waitDelivered(t, s, branch, tx) // Delivery lists the templates from its index, which may lag the setup
	object := fmt.Sprintf("/studio/b/%d/content/%d/%d", branch, typeID, objID)

	p := s.page(t, "editor")
	p.login()
	p.open(object)
	p.waitValue(teaser, 201, "Plan teaser")
	p.waitFor("no preview before it is asked for", `!document.querySelector("aside.preview")`)

	// Open the preview: the first template, in the first shown language.
	p.click("Preview")
	p.waitFor("the preview renders the teaser in en-US", previewFrame+`.includes("<h1>Plan teaser</h1><p>Language: en-US</p>")`)
	p.waitFor("the address keeps the preview", `new URLSearchParams(location.search).get("preview") === "on"`)
	p.waitFor("the template is chosen by name", fmt.Sprintf(`document.getElementById("preview-template")?.value === "%d" && document.getElementById("preview-template").selectedOptions[0].textContent === "Note page"`, tpl))
	p.waitFor("the frame is sandboxed without scripts or the studio's origin", `(() => { const f = document.querySelector("iframe.preview-frame");
		const s = f.getAttribute("sandbox").split(/\s+/); return f.hasAttribute("sandbox") && !s.includes("allow-scripts") && !s.includes("allow-same-origin") && f.contentDocument === null; })()`)
	p.waitFor("the frame has an accessible name", `document.querySelector("iframe.preview-frame").title === "Preview of Launch note with Note page in English (United States)"`)
	if title := studioEval[string](p, `new Promise(r => setTimeout(() => r(document.title), 500))`); title == "ran" {
		t.Errorf("the template's script ran in the studio's page")
	}
	p.waitFor("the frame shows it", previewShown)
	p.shot("preview-open")
	p.checkAccessibility("the object with its preview")

	// Save a new teaser: the preview shows it once the save answered.
	p.fill("Teaser (en-US)", "Launch on Monday")
	p.click("Save")
	p.waitText("Saved.")
	p.waitFor("the preview shows the saved teaser", previewFrame+`.includes("<h1>Launch on Monday</h1>")`)
	p.waitFor("the frame shows it", previewShown)
	p.shot("preview-after-save")

	// The preview in German: the German teaser and the render language de-DE.
	p.choose("Preview language", "202")
	p.waitFor("the preview renders in German", previewFrame+`.includes("<h1>Plan-Anreißer</h1><p>Language: de-DE</p>")`)
	p.waitFor("the address keeps the language", `new URLSearchParams(location.search).get("previewLang") === "202"`)
	p.waitFor("the frame shows it", previewShown)
	p.shot("preview-german")

	// The Delivery JSON: the link names the object's Delivery address, which answers the object.
	p.waitFor("the Delivery JSON link", fmt.Sprintf(`document.querySelector("a.preview-json")?.getAttribute("href") === "/delivery/api/branches/%d/objects/%d"`, branch, objID))
	got := studioEval[float64](p, `(async () => { const s = JSON.parse(sessionStorage.getItem("cms.studio.session"));
		const r = await fetch(document.querySelector("a.preview-json").href, {headers: {"Authorization": "Bearer " + s.token, "Accept": "application/json"}});
		if (!r.ok) throw new Error("delivery: " + r.status); return (await r.json()).obj.meta.id; })()`)
	if int64(got) != objID {
		t.Errorf("the Delivery JSON link answers object %v, want %d", got, objID)
	}

	// A template that does not compile: the API's problem with its line, in place of the frame.
	p.choose("Template", fmt.Sprint(broken))
	p.waitFor("the template's error is shown, no stale page", `[...document.querySelectorAll("aside.preview [role=alert]")].some(e => e.textContent.includes("line 1")) && !document.querySelector("iframe.preview-frame")`)
	p.shot("preview-template-error")
	p.choose("Template", fmt.Sprint(tpl))
	p.waitFor("the good template again, no error", previewFrame+`.includes("<h1>Plan-Anreißer</h1>") && !document.querySelector("aside.preview [role=alert]")`)

	// A reload keeps the preview, its template and language (the address).
	p.open(fmt.Sprintf("%s?preview=%d&previewLang=202", object, tpl))
	p.waitFor("the preview after a reload", previewFrame+`.includes("<h1>Plan-Anreißer</h1><p>Language: de-DE</p>")`)

	// In German the controls speak German.
	p.step("language de", studioWait, chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.querySelector("select[aria-label=Language]"); s.value = "de"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	p.waitFor("the preview's controls in German", `document.querySelector("aside.preview")?.getAttribute("aria-label") === "Vorschau" && !!document.querySelector("a.preview-json[title^='Das Delivery-JSON']")`)
	p.shot("preview-german-ui")
	p.checkAccessibility("the preview in German")
}
