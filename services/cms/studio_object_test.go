package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func init() {
	addStudioJourney("object", studioObjectJourney)
	addStudioJourney("conflict", studioConflictJourney)
}

// studioObjectOpenBudget is the budget: an object opens within
// 200 ms of the click (asserted on the embedded setup, logged on both).
const studioObjectOpenBudget = 200 * time.Millisecond

// studioModel is a content type with its attributes, for the object journeys.
type studioModel struct {
	typ                         string // the type's ApiIdentifier
	typeID                      int64
	title, teaser, price, count int64
}

// createObjects creates objects on branch and returns their ids.
func createObjects(t *testing.T, base string, branch int64, objs ...string) []int64 {
	t.Helper()
	b := mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch),
		`{"objects":[`+strings.Join(objs, ",")+`]}`)
	var w writeAnswer
	if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != len(objs) {
		t.Fatalf("create objects: %v: %s", err, b)
	}
	return w.CreatedObjectIDs
}

// setupStudioModel creates a type whose create form lists a language
// dependent title and teaser, a Decimal price and an Integer count.
func setupStudioModel(t *testing.T, base, prefix string) studioModel {
	t.Helper()
	attr := func(api, name, dt string, langDep bool) string {
		return `{"meta":{"typeRef":10,"apiIdentifier":"` + prefix + api + `"},"values":[` + value(1000, 201, name) + "," +
			value(1001, 0, dt) + "," + value(1004, 0, false) + "," + value(1017, 0, langDep) + "]}"
	}
	ids := createObjects(t, base, 4, attr("Title", "Title", "String", true), attr("Teaser", "Teaser", "String", true),
		attr("Price", "Price", "Decimal", false), attr("Count", "Count", "Integer", false))
	m := studioModel{typ: prefix + "Article", title: ids[0], teaser: ids[1], price: ids[2], count: ids[3]}
	var rows []string
	for i, id := range ids {
		rows = append(rows, fmt.Sprintf(`{"attribute":5053,"language":0,"variant":0,"value":%d,"sortReverse":%d}`, id, i))
	}
	form := createObjects(t, base, 4, `{"meta":{"typeRef":50},"values":[`+value(1000, 201, prefix+" form")+","+strings.Join(rows, ",")+`]}`)[0]
	m.typeID = createObjects(t, base, 4, `{"meta":{"typeRef":0,"apiIdentifier":"`+m.typ+`"},"values":[`+value(1000, 201, prefix+" article")+","+value(5001, 0, form)+`]}`)[0]
	return m
}

// createArticle creates an article on branch 4 and returns its id.
func (m studioModel) createArticle(t *testing.T, base string, vals ...string) int64 {
	t.Helper()
	return createObjects(t, base, 4, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, m.typeID, strings.Join(vals, ",")))[0]
}

// localValues reads the values stored on branch for object id (inherited=false), keyed "attr/lang".
func localValues(t *testing.T, base string, branch, id int64) map[string]any {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%d", base, branch, id), "")
	var o struct {
		Values []struct {
			Attribute int64 `json:"attribute"`
			Language  int64 `json:"language"`
			Value     any   `json:"value"`
		} `json:"values"`
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

// cellID is the id of the input of (attribute, language) in the editor.
func cellID(attr, lang int64) string { return fmt.Sprintf("f-%d-%d-0", attr, lang) }

// badge is the JavaScript for the provenance badge text of a cell.
func badge(attr, lang int64) string {
	return fmt.Sprintf(`(document.querySelector('.cell[data-key="%d:%d:0"] .badge')?.textContent ?? "")`, attr, lang)
}

// waitBadge waits until the cell's badge has the source kind and says text.
func (p *studioPage) waitBadge(attr, lang int64, kind, text string) {
	p.t.Helper()
	q, _ := json.Marshal(text)
	p.waitFor(fmt.Sprintf("badge %d/%d says %s", attr, lang, text), fmt.Sprintf(
		`document.querySelector('.cell[data-key="%d:%d:0"] .badge')?.dataset.source === %q && %s.includes(%s)`, attr, lang, kind, badge(attr, lang), q))
}

// waitValue waits until the input of (attr, lang) shows v.
func (p *studioPage) waitValue(attr, lang int64, v string) {
	p.t.Helper()
	q, _ := json.Marshal(v)
	p.waitFor(fmt.Sprintf("input %d/%d shows %s", attr, lang, v), fmt.Sprintf(`document.getElementById(%q)?.value === %s`, cellID(attr, lang), q))
}

// openObject navigates the open studio to the object as a click on a link
// does (history.pushState + popstate, the router's path) and returns the
// time until the form shows the value want in the input of (attr, lang).
func (p *studioPage) openObject(path string, attr, lang int64, want string) time.Duration {
	p.t.Helper()
	js := fmt.Sprintf(`new Promise((resolve) => {
		const t0 = performance.now();
		const ok = () => document.getElementById(%q)?.value === %q;
		const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); resolve(performance.now() - t0); } });
		obs.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
		history.pushState(null, "", %q);
		dispatchEvent(new PopStateEvent("popstate"));
		setTimeout(() => { obs.disconnect(); resolve(ok() ? performance.now() - t0 : -1); }, 8000);
	})`, cellID(attr, lang), want, path)
	ms := studioEval[float64](p, js)
	if ms < 0 {
		p.shot("failed-open")
		p.t.Fatalf("the object did not show %q in %s within 8 s\npage: %s", want, cellID(attr, lang), p.text())
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// branchName reads the English name of a branch.
func branchName(t *testing.T, base string, id int64) string {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d", base, id), "")
	var o struct {
		Values []struct {
			Attribute int64 `json:"attribute"`
			Language  int64 `json:"language"`
			Value     any   `json:"value"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	for _, v := range o.Values {
		if v.Attribute == 1000 && (v.Language == 201 || v.Language == 0) {
			return fmt.Sprint(v.Value)
		}
	}
	return fmt.Sprintf("#%d", id)
}

// studioObjectJourney: an object written on the default branch, opened on a
// child branch: every value says it is inherited from the parent; one is
// overridden here, saved (set here), and put back to inherited; English and
// German side by side, a missing German value shows the English fallback; a
// number typed in German notation; the API's validation error at its field;
// unsaved changes survive a reload and a lost connection; the open time is
// within the budget.
func studioObjectJourney(t *testing.T, s *studioSetup) {
	m := setupStudioModel(t, s.base, "obj")
	obj := m.createArticle(t, s.base, value(m.title, 201, "Spring sale"), value(m.title, 202, "Frühlingsangebot"),
		value(m.teaser, 201, "Everything half price"), value(m.price, 0, 10), value(m.count, 0, 3))
	child := createBranch(t, s.base, "Object journey")
	parent := branchName(t, s.base, 4)
	path := fmt.Sprintf("/studio/b/%d/content/%s/%d", child, m.typ, obj)

	p := s.page(t, "editor")
	p.login()
	// The budget, as for the list's first page: up to three opens, each
	// from a freshly loaded list page (nothing in the studio's memory),
	// settled as a page is when an editor clicks (branches and types
	// loaded). On a loaded machine one open can be slow for reasons of its
	// own, so the best of three must be within the budget; each is logged.
	var opens []time.Duration
	for attempt := 0; attempt < 3; attempt++ {
		p.open(fmt.Sprintf("/studio/b/%d/content/%s", child, m.typ))
		p.waitFor("the content section", `!!document.querySelector(".type-nav a[aria-current=page]") && document.querySelectorAll("select[aria-label=Branch] option").length > 1`)
		d := p.openObject(path, m.title, 201, "Spring sale")
		opens = append(opens, d.Round(100*time.Microsecond))
		if d <= studioObjectOpenBudget {
			break
		}
	}
	took := slices.Min(opens)
	t.Logf("%s: the object opened in %v (budget %v; opens: %v)", s.name, took, studioObjectOpenBudget, opens)
	if s.name == "embedded" && took > studioObjectOpenBudget {
		t.Errorf("the object opened in %v at best of %v, over the budget of %v", took, opens, studioObjectOpenBudget)
	}
	inherited := "Inherited from " + parent
	p.waitBadge(m.title, 201, "inherited", inherited)
	p.waitBadge(m.price, 0, "inherited", inherited)
	p.waitValue(m.price, 0, "10")
	p.shot("inherited")
	p.checkAccessibility("the object editor")

	// Override the title here, save: set here, stored on the child only.
	p.click("Override here: Title (en-US)")
	p.waitBadge(m.title, 201, "edited", "Changed, not saved")
	p.fill("Title (en-US)", "Spring sale on the child")
	p.shot("overridden")
	p.click("Save")
	p.waitBadge(m.title, 201, "local", "Set here")
	p.waitValue(m.title, 201, "Spring sale on the child")
	if got := localValues(t, s.base, child, obj)[fmt.Sprintf("%d/201", m.title)]; got != "Spring sale on the child" {
		t.Errorf("the child's own title after saving = %v", got)
	}
	if got := localValues(t, s.base, 4, obj)[fmt.Sprintf("%d/201", m.title)]; got != "Spring sale" {
		t.Errorf("the parent's title after saving on the child = %v", got)
	}
	p.shot("set-here")

	// Back to inherited: the child's row is gone, the parent's value shows.
	p.click("Back to inherited: Title (en-US)")
	p.waitBadge(m.title, 201, "toInherit", "Back to inherited, not saved")
	p.click("Save")
	p.waitBadge(m.title, 201, "inherited", inherited)
	p.waitValue(m.title, 201, "Spring sale")
	if v, ok := localValues(t, s.base, child, obj)[fmt.Sprintf("%d/201", m.title)]; ok {
		t.Errorf("the child still stores a title after back to inherited: %v", v)
	}
	p.shot("back-to-inherited")

	// English and German side by side: the German teaser is missing and
	// shows the English one as a fallback.
	p.step("show German", studioWait, chromedp.Click(labelled("de-DE"), chromedp.NodeVisible))
	p.waitFor("the address names both languages", `new URLSearchParams(location.search).get("langs") === "201,202"`)
	p.waitValue(m.title, 202, "Frühlingsangebot")
	p.waitBadge(m.teaser, 202, "fallback", "Fallback from en-US")
	p.waitFor("the fallback value is shown", fmt.Sprintf(`document.querySelector('.cell[data-key="%d:202:0"]').innerText.includes("Everything half price")`, m.teaser))
	p.shot("languages-side-by-side")
	p.checkAccessibility("two languages side by side")

	// A number in German notation.
	p.step("switch to German", studioWait, chromedp.SetValue(chromedp.CSS("select[aria-label=Language]"), "de"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("select[aria-label=Sprache], select[aria-label=Language]").dispatchEvent(new Event("change", {bubbles: true}))`))
	p.waitText("Speichern")
	p.waitValue(m.price, 0, "10")
	p.fill("Price", "1.234,5")
	p.shot("german-number")
	p.click("Speichern")
	p.waitBadge(m.price, 0, "local", "Hier gesetzt")
	p.waitValue(m.price, 0, "1.234,5")
	if got := localValues(t, s.base, child, obj)[fmt.Sprintf("%d/0", m.price)]; got != 1234.5 {
		t.Errorf("the price typed as 1.234,5 is stored as %v, want 1234.5", got)
	}
	p.shot("german-number-saved")
	p.step("switch to English", studioWait, chromedp.SetValue(chromedp.CSS("select[aria-label=Sprache]"), "en"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("select[aria-label=Sprache], select[aria-label=Language]").dispatchEvent(new Event("change", {bubbles: true}))`))
	p.waitText("Save")

	// The API's validation error at its field: an integer beyond 2^53-1.
	p.fill("Count", "99999999999999999")
	p.click("Save")
	p.waitFor("the error at the count field", fmt.Sprintf(
		`(document.getElementById(%q)?.innerText ?? "").includes("must lie within") && document.getElementById(%q).getAttribute("aria-invalid") === "true"`,
		cellID(m.count, 0)+"-error", cellID(m.count, 0)))
	p.shot("validation-error")
	p.checkAccessibility("a validation error")

	// Unsaved changes survive a reload.
	p.fill("Count", "42")
	p.step("reload", studioWait, chromedp.Reload())
	p.waitText("Restored unsaved changes from")
	p.waitValue(m.count, 0, "42")
	p.waitBadge(m.count, 0, "edited", "Changed, not saved")
	p.shot("restored")
	// … and a lost connection: the save fails, the draft stays and says so.
	studioEval[bool](p, `(window.__fetch = window.fetch, window.fetch = () => Promise.reject(new TypeError("Failed to fetch")), true)`)
	p.click("Save")
	p.waitText("No connection: your changes are kept in this browser.")
	p.shot("offline")
	p.step("reload offline", studioWait, chromedp.Reload())
	p.waitText("Restored unsaved changes from")
	p.waitValue(m.count, 0, "42")
	p.shot("offline-kept")
	p.click("Save")
	p.waitBadge(m.count, 0, "local", "Set here")
	if got := localValues(t, s.base, child, obj)[fmt.Sprintf("%d/0", m.count)]; got != 42.0 {
		t.Errorf("the count after saving the restored draft = %v, want 42", got)
	}
	if studioEval[bool](p, `Object.keys(localStorage).some(k => k.startsWith("cms.studio.draft."))`) {
		t.Errorf("a draft is left in local storage after saving")
	}
	// Discard drops a draft.
	p.fill("Count", "7")
	p.click("Discard changes")
	p.waitValue(m.count, 0, "42")
	p.shot("saved")
}

// studioConflictJourney: two editors open the same object and both change
// it; the second save is stale (412) and opens the conflict view, which
// names the other writer (her display name) and when, with both values
// field by field; the editor takes the other's title and keeps their own
// price, and that is what is stored.
func studioConflictJourney(t *testing.T, s *studioSetup) {
	m := setupStudioModel(t, s.base, "cfl")
	obj := m.createArticle(t, s.base, value(m.title, 201, "Autumn sale"), value(m.teaser, 201, "Leaves fall"), value(m.price, 0, 10))
	path := fmt.Sprintf("/studio/b/4/content/%s/%d", m.typ, obj)
	createGrantedUser(t, s.base, "carla", "Carla Berger", "carla-password-1", 1105, 4)
	editor, other := s.page(t, "editor"), s.page(t, "other")
	editor.login()
	other.signInAs("carla", "carla-password-1")
	for _, p := range []*studioPage{editor, other} {
		p.open(path)
		p.waitValue(m.title, 201, "Autumn sale")
	}
	editor.fill("Title (en-US)", "Autumn sale, the editor's")
	editor.fill("Price", "20")
	editor.shot("editing")
	other.fill("Title (en-US)", "Autumn sale, the other's")
	other.fill("Teaser (en-US)", "Leaves fall, says the other")
	other.click("Save")
	other.waitBadge(m.title, 201, "local", "Set here")
	other.shot("saved-first")

	editor.click("Save")
	editor.waitText("Someone else saved this object")
	editor.waitFor("both titles side by side", fmt.Sprintf(
		`(() => { const r = document.querySelector('.conflict tr[data-key="%d:201:0"]'); return !!r && r.innerText.includes("Autumn sale, the editor's") && r.innerText.includes("Autumn sale, the other's") && r.innerText.includes("changed by the other writer"); })()`, m.title))
	editor.waitFor("the price: mine against the unchanged one", fmt.Sprintf(
		`(() => { const r = document.querySelector('.conflict tr[data-key="%d:0:0"]'); return !!r && r.innerText.includes("20") && r.innerText.includes("10") && r.innerText.includes("not changed"); })()`, m.price))
	editor.waitFor("the other writer named, with when", `(() => { const t = document.querySelector(".conflict-writer")?.innerText ?? ""; return t.includes("Carla Berger saved it after you opened it, ") && /\(transaction \d+\)/.test(t); })()`)
	// Her initials sit beside her name: on the same line, just left of the sentence that starts with it.
	editor.waitFor("the writer's initials beside her name", `(() => {
		const w = document.querySelector(".conflict-writer"), a = w?.querySelector(".avatar"), p = w?.querySelector("p");
		if (!a || !p || a.textContent !== "CB" || !p.innerText.startsWith("Carla Berger")) return false;
		const ra = a.getBoundingClientRect(), rp = p.getBoundingClientRect();
		return ra.right <= rp.left && rp.left - ra.right <= 24 && ra.top < rp.bottom && ra.bottom > rp.top;
	})()`)
	editor.shot("conflict")
	editor.checkAccessibility("the conflict view")
	editor.step("take their title", studioWait, chromedp.Click(labelled("Take theirs: Title (en-US)"), chromedp.NodeVisible))
	editor.shot("resolved")
	editor.click("Save my choices")
	editor.waitBadge(m.price, 0, "local", "Set here")
	editor.waitValue(m.title, 201, "Autumn sale, the other's")
	editor.waitValue(m.price, 0, "20")
	editor.shot("saved")
	got := localValues(t, s.base, 4, obj)
	if got[fmt.Sprintf("%d/201", m.title)] != "Autumn sale, the other's" || got[fmt.Sprintf("%d/0", m.price)] != 20.0 ||
		got[fmt.Sprintf("%d/201", m.teaser)] != "Leaves fall, says the other" {
		t.Errorf("after resolving the conflict the object stores %v", got)
	}
}
