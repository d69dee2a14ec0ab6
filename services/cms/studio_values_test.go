package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("values", studioValuesJourney)
}

// valuesModel is what the values journey creates on its own branch: a
// type whose form lists multi-valued attributes of four data types, a
// language-dependent headline and a subtitle with the variant axis
// "Season" (a type whose objects Summer and Winter are the variants), and a
// single date-time.
type valuesModel struct {
	typeID                      int64
	tags, scores, days, related int64 // String, Integer, DateTime.Date, ObjRef: multi-valued
	headline, subtitle          int64 // String with the variant axis (headline language dependent)
	starts                      int64 // DateTime
	season, summer, winter      int64
	obj, refA, refB, refC       int64
}

func setupValuesModel(t *testing.T, base string, branch int64) valuesModel {
	t.Helper()
	var vm valuesModel
	vm.season = createObjects(t, base, branch, `{"meta":{"typeRef":0,"apiIdentifier":"valuesSeason"},"values":[`+value(1000, 201, "Season")+`]}`)[0]
	ids := createObjects(t, base, branch, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, vm.season, value(1000, 201, "Summer")),
		fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, vm.season, value(1000, 201, "Winter")))
	vm.summer, vm.winter = ids[0], ids[1]
	attr := func(api, name, dt string, multi, langDep bool, axis int64) string {
		v := []string{value(1000, 201, name), value(1001, 0, dt), value(1004, 0, multi), value(1017, 0, langDep)}
		if axis != 0 {
			v = append(v, value(1002, 0, axis))
		}
		return `{"meta":{"typeRef":10,"apiIdentifier":"` + api + `"},"values":[` + strings.Join(v, ",") + `]}`
	}
	ids = createObjects(t, base, branch, attr("valuesTags", "Tags", "String", true, false, 0), attr("valuesScores", "Scores", "Integer", true, false, 0),
		attr("valuesDays", "Days", "DateTime.Date", true, false, 0), attr("valuesRelated", "Related", "ObjRef", true, false, 0),
		attr("valuesHeadline", "Headline", "String", false, true, vm.season), attr("valuesSubtitle", "Subtitle", "String", false, false, vm.season),
		attr("valuesStarts", "Starts", "DateTime", false, false, 0))
	vm.tags, vm.scores, vm.days, vm.related, vm.headline, vm.subtitle, vm.starts = ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	var rows []string
	for i, id := range ids {
		rows = append(rows, fmt.Sprintf(`{"attribute":5053,"language":0,"variant":0,"value":%d,"sortReverse":%d}`, id, i))
	}
	form := createObjects(t, base, branch, `{"meta":{"typeRef":50},"values":[`+value(1000, 201, "Values form")+","+strings.Join(rows, ",")+`]}`)[0]
	vm.typeID = createObjects(t, base, branch, `{"meta":{"typeRef":0,"apiIdentifier":"valuesThing"},"values":[`+value(1000, 201, "Thing")+","+value(5001, 0, form)+`]}`)[0]
	refs := createObjects(t, base, branch, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, vm.typeID, value(1000, 201, "Ref A")),
		fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, vm.typeID, value(1000, 201, "Ref B")),
		fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, vm.typeID, value(1000, 201, "Ref C")))
	vm.refA, vm.refB, vm.refC = refs[0], refs[1], refs[2]
	multi := func(attr int64, vs ...any) string {
		var out []string
		for i, v := range vs {
			b, _ := json.Marshal(v)
			out = append(out, fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%s,"sortReverse":%d}`, attr, b, i))
		}
		return strings.Join(out, ",")
	}
	vm.obj = createObjects(t, base, branch, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s,%s,%s,%s,%s,%s,%s]}`, vm.typeID,
		value(1000, 201, "Multi thing"), multi(vm.tags, "red", "green"), multi(vm.scores, 5), multi(vm.related, vm.refA, vm.refB),
		value(vm.headline, 201, "Plain headline"),
		fmt.Sprintf(`{"attribute":%d,"language":201,"variant":%d,"value":"Sunny headline"}`, vm.headline, vm.summer),
		value(vm.subtitle, 0, "Plain subtitle"), value(vm.starts, 0, "2026-03-01T09:30:00Z")))[0]
	return vm
}

// storedRows reads the rows stored on branch for object id: "attr/lang/variant" → values in sortReverse order.
func storedRows(t *testing.T, base string, branch, id int64) map[string][]any {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects/%d", base, branch, id), "")
	var o struct {
		Values []struct {
			Attribute, Language, Variant, SortReverse int64
			Value                                     any
		}
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("read object %d: %v: %s", id, err, b)
	}
	slices.SortStableFunc(o.Values, func(a, b struct {
		Attribute, Language, Variant, SortReverse int64
		Value                                     any
	}) int {
		return int(a.SortReverse - b.SortReverse)
	})
	out := map[string][]any{}
	for _, v := range o.Values {
		k := fmt.Sprintf("%d/%d/%d", v.Attribute, v.Language, v.Variant)
		out[k] = append(out[k], v.Value)
	}
	return out
}

// rowInput is the id of row i's input of a multi-valued, language-independent attribute.
func rowInput(attr int64, i int) string { return fmt.Sprintf("f-%d-0-0-%d", attr, i) }

// studioValuesJourney: multi-valued attributes edited one value per row
// (strings, integers, dates, references), reordered with the buttons and
// with Alt+↑ from the keyboard, rows added and removed; saved, the API
// holds the rows in the order shown; a reference to an object deleted
// meanwhile is refused by the API and the message lands on its row. The
// variants of the type's variant axis are offered by name; the chosen
// one's values show under the values without variant, with where they come
// from (set here, a fallback from the value without variant), and a value
// typed for the variant is stored for it. A date-time shows and is typed in
// the browser's time zone (Europe/Berlin here) and stored in UTC, summer
// time included.
func studioValuesJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Values work")
	vm := setupValuesModel(t, s.base, branch)
	p := s.page(t, "editor")
	p.step("a browser in Berlin", studioWait, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Berlin"})
		return err
	}))
	p.login()
	p.open(fmt.Sprintf("/studio/b/%d/content/%d/%d", branch, vm.typeID, vm.obj))
	p.waitFor("the tag rows", fmt.Sprintf(`document.getElementById(%q)?.value === "red" && document.getElementById(%q)?.value === "green"`,
		rowInput(vm.tags, 0), rowInput(vm.tags, 1)))
	p.waitFor("the reference rows", `[...document.querySelectorAll(".ref-rows a.ref-name")].map(a => a.textContent).join() === "Ref A,Ref B"`)
	// 09:30 UTC on 1 March is 10:30 in Berlin (CET).
	p.waitFor("the date-time in local time", fmt.Sprintf(`document.getElementById(%q)?.value === "2026-03-01T10:30"`, cellID(vm.starts, 0)))
	p.shot("rows")
	p.checkAccessibility("multi-valued attributes")

	// Keyboard: Alt+↑ on "green" moves it first, the focus stays in it.
	p.step("focus green", studioWait, chromedp.Focus(chromedp.CSS("#"+rowInput(vm.tags, 1))))
	p.step("Alt+Up", studioWait, chromedp.KeyEvent(kb.ArrowUp, chromedp.KeyModifiers(chromedp.ModifierAlt)))
	p.waitFor("green moved up, focused", fmt.Sprintf(`document.getElementById(%q).value === "green" && document.getElementById(%q).value === "red" && document.activeElement === document.getElementById(%q)`,
		rowInput(vm.tags, 0), rowInput(vm.tags, 1), rowInput(vm.tags, 0)))
	// Add a row and type into it; remove "red"; the buttons move too.
	if got := studioEval[string](p, `(document.querySelector("[aria-label=\"Add to Tags\"]") || {}).textContent?.trim() ?? ""`); got != "Add" {
		t.Errorf("the add button of Tags says %q, want Add", got)
	}
	p.click("Add to Tags")
	p.waitFor("a third row has the focus", fmt.Sprintf(`document.activeElement === document.getElementById(%q)`, rowInput(vm.tags, 2)))
	p.step("type blue", studioWait, chromedp.SendKeys(chromedp.CSS("#"+rowInput(vm.tags, 2)), "blue"))
	p.click("Remove value 2 of Tags")
	p.waitFor("red removed", fmt.Sprintf(`document.getElementById(%q).value === "green" && document.getElementById(%q).value === "blue" && !document.getElementById(%q)`,
		rowInput(vm.tags, 0), rowInput(vm.tags, 1), rowInput(vm.tags, 2)))
	p.click("Move value 2 of Tags up")
	p.waitFor("blue first", fmt.Sprintf(`document.getElementById(%q).value === "blue"`, rowInput(vm.tags, 0)))
	// Integers and dates: rows of their own inputs.
	p.click("Add to Scores")
	p.step("type 1,234", studioWait, chromedp.SendKeys(chromedp.CSS("#"+rowInput(vm.scores, 1)), "1,234"))
	p.click("Add to Days")
	p.step("a date", studioWait, chromedp.SetValue(chromedp.CSS("#"+rowInput(vm.days, 0)), "2026-03-01"),
		evalJS(fmt.Sprintf(`document.getElementById(%q).dispatchEvent(new Event("input", {bubbles: true}))`, rowInput(vm.days, 0))))
	// 10:30 in Berlin on 1 July (CEST) is 08:30 UTC.
	p.step("a date-time", studioWait, chromedp.SetValue(chromedp.CSS("#"+cellID(vm.starts, 0)), "2026-07-01T10:30"),
		evalJS(fmt.Sprintf(`document.getElementById(%q).dispatchEvent(new Event("input", {bubbles: true}))`, cellID(vm.starts, 0))))
	// References: Ref B first.
	p.click("Move Ref B up")
	p.waitFor("Ref B first", `[...document.querySelectorAll(".ref-rows a.ref-name")].map(a => a.textContent).join() === "Ref B,Ref A"`)
	p.shot("edited")
	p.checkAccessibility("edited rows")

	// An integer beyond 2^53-1 in the third row: the API's message at that row (its sortReverse member).
	p.click("Add to Scores")
	p.step("type a huge number", studioWait, chromedp.SendKeys(chromedp.CSS("#"+rowInput(vm.scores, 2)), "99999999999999999"))
	p.click("Save")
	p.waitFor("the error at the third score", fmt.Sprintf(
		`(document.querySelector('.cell[data-key="%d:0:0"] li[data-row="2"] .field-error')?.innerText ?? "").includes("must lie within") && document.getElementById(%q).getAttribute("aria-invalid") === "true" && document.activeElement === document.getElementById(%q)`,
		vm.scores, rowInput(vm.scores, 2), rowInput(vm.scores, 2)))
	p.shot("row-error-number")
	p.click("Remove value 3 of Scores")

	// Ref B is deleted meanwhile: the API refuses the save, at Ref B's row.
	mustCall(t, http.StatusOK, http.MethodDelete, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", s.base, branch), fmt.Sprintf(`{"objectIds":["%d"]}`, vm.refB))
	p.click("Save")
	p.waitFor("the error at Ref B's row", fmt.Sprintf(
		`(document.querySelector('.cell[data-key="%d:0:0"] li[data-row="0"] .field-error')?.innerText ?? "").includes("does not exist") && !document.querySelector('.cell[data-key="%d:0:0"] li[data-row="1"] .field-error')`,
		vm.related, vm.related))
	p.shot("row-error")
	p.checkAccessibility("an error at a row")
	p.click(fmt.Sprintf("Remove %s", "Ref B"))
	p.click("Save")
	p.waitFor("saved and read again", fmt.Sprintf(`!document.querySelector(".badge-edited") && !document.querySelector(".field-error") && document.querySelector('.cell[data-key="%d:0:0"] .badge')?.dataset.source === "local" && document.getElementById(%q)?.value === "blue"`, vm.days, rowInput(vm.tags, 0)))
	got := storedRows(t, s.base, branch, vm.obj)
	want := map[string][]any{
		fmt.Sprintf("%d/0/0", vm.tags):    {"blue", "green"},
		fmt.Sprintf("%d/0/0", vm.scores):  {5.0, 1234.0},
		fmt.Sprintf("%d/0/0", vm.days):    {"2026-03-01"},
		fmt.Sprintf("%d/0/0", vm.related): {float64(vm.refA)},
		fmt.Sprintf("%d/0/0", vm.starts):  {"2026-07-01T08:30:00Z"},
	}
	for k, w := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(w) {
			t.Errorf("stored %s = %v, want %v", k, got[k], w)
		}
	}
	p.shot("saved")

	// Variants by name: Summer's values under the values without variant.
	p.waitFor("the variant picker names the variants", `[...document.querySelectorAll("select option")].some(o => o.textContent === "Summer" && o.parentElement.label === "Season")`)
	p.step("choose Summer", studioWait, chromedp.SetValue(chromedp.CSS("#variant-picker"), fmt.Sprint(vm.summer)),
		evalJS(`document.getElementById("variant-picker").dispatchEvent(new Event("change", {bubbles: true}))`))
	p.waitFor("the address names the variant", fmt.Sprintf(`new URLSearchParams(location.search).get("variant") === "%d"`, vm.summer))
	sumKey := func(attr int64, lang int) string { return fmt.Sprintf("%d:%d:%d", attr, lang, vm.summer) }
	p.waitFor("Summer's headline, set here", fmt.Sprintf(`(() => { const c = document.querySelector('.cell[data-key="%s"]'); return !!c && c.querySelector("input").value === "Sunny headline" && c.querySelector(".badge").dataset.source === "local"; })()`, sumKey(vm.headline, 201)))
	p.waitFor("Summer's subtitle falls back to the value without variant", fmt.Sprintf(`(() => { const c = document.querySelector('.cell[data-key="%s"]'); return !!c && c.querySelector(".badge").dataset.source === "base" && c.innerText.includes("Fallback from the value without variant") && c.innerText.includes("Plain subtitle") && c.querySelector("input").value === ""; })()`, sumKey(vm.subtitle, 0)))
	p.waitFor("no variant row for an attribute without the axis", fmt.Sprintf(`!document.querySelector('.cell[data-key="%d:0:%d"]')`, vm.tags, vm.summer))
	p.shot("variant-summer")
	p.checkAccessibility("a variant beside the base values")
	p.fill("Subtitle — Summer", "Summer subtitle")
	p.click("Save")
	p.waitFor("the summer subtitle is set here", fmt.Sprintf(`document.querySelector('.cell[data-key="%s"] .badge')?.dataset.source === "local"`, sumKey(vm.subtitle, 0)))
	got = storedRows(t, s.base, branch, vm.obj)
	if v := got[fmt.Sprintf("%d/0/%d", vm.subtitle, vm.summer)]; fmt.Sprint(v) != "[Summer subtitle]" {
		t.Errorf("stored Summer subtitle = %v", v)
	}
	if v := got[fmt.Sprintf("%d/0/0", vm.subtitle)]; fmt.Sprint(v) != "[Plain subtitle]" {
		t.Errorf("the subtitle without variant = %v after saving Summer's", v)
	}
	p.shot("variant-saved")
	// German: the variant and the rows speak German.
	p.step("switch to German", studioWait, chromedp.SetValue(chromedp.CSS("select[aria-label=Language]"), "de"),
		evalJS(`document.querySelector("select[aria-label=Sprache], select[aria-label=Language]").dispatchEvent(new Event("change", {bubbles: true}))`))
	p.waitFor("the rows speak German, the add button says Hinzufügen", `(document.querySelector("[aria-label=\"Zu Tags hinzufügen\"]") || {}).textContent?.trim() === "Hinzufügen"`)
	p.waitText("Variante")
	p.shot("german")
	p.checkAccessibility("the rows and the variant in German")
}
