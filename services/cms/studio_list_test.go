package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("list", studioListJourney)
}

const (
	// listSeed objects of one type: the budget's 10,000 plus three lamps.
	listSeed = 10_000
	// listFirstPageBudget: on the embedded setup the first page of a type
	// with 10,000 objects shows within this after the click in the
	// navigation (the budget).
	listFirstPageBudget = 300 * time.Millisecond
)

// studioListJourney: a type with 10,003 objects; its list shows the count,
// scrolls deep with only the visible rows rendered, sorts by a column both
// ways, searches the full text, filters with the builder (a bad filter's
// 400 message shown at the builder), deletes an object (gone from live,
// there with the deleted filter) and restores it; a reload keeps the view;
// the first page after the click shows within the budget. The objects live
// on a branch of their own: on the default branch every branch a later
// journey creates would inherit them and be indexed with 10,003 documents.
func studioListJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Catalogue")
	content := fmt.Sprintf("/studio/b/%d/content", branch)
	typeName, priceID, typeID := seedListType(t, s.base, branch)
	p := s.page(t, "editor")
	p.login()
	p.open(content)
	link := fmt.Sprintf(`[...document.querySelectorAll(".type-nav a")].find(a => a.textContent.trim() === %q)`, typeName)
	p.waitFor("the navigation lists the type", "!!"+link)
	if studioEval[bool](p, `[...document.querySelectorAll(".type-nav a")].some(a => a.textContent.trim() === "typeAttribute")`) {
		t.Errorf("the navigation lists the system type typeAttribute")
	}
	p.shot("types")

	// The budget: from the click in the navigation to the first rows in the
	// table. Up to three clicks, each on a freshly loaded page (nothing in
	// the studio's memory): the first asks the engine, later ones may be
	// answered from Delivery's cache, as they would be for the next editor.
	// On a loaded machine one click can be slow for reasons of its own, so
	// the best of three must be within the budget; each is logged.
	clickToRows := func() time.Duration {
		ms := studioEval[float64](p, `new Promise(done => {
			const a = `+link+`; const t0 = performance.now();
			window.__listClick = t0;
			const seen = () => !!document.querySelector(".list-table tr.list-row:not(.is-loading)");
			const mo = new MutationObserver(() => { if (seen()) { mo.disconnect(); done(performance.now() - t0); } });
			mo.observe(document.body, {subtree: true, childList: true, attributes: true});
			a.click();
		})`)
		return time.Duration(ms * float64(time.Millisecond))
	}
	var clicks []time.Duration
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			p.open(content)
			p.waitFor("the navigation lists the type", "!!"+link)
		}
		d := clickToRows()
		clicks = append(clicks, d.Round(time.Millisecond))
		if attempt == 0 {
			t.Logf("the requests of the first page (click at %.0f ms): %s", studioEval[float64](p, `window.__listClick`), studioEval[string](p, `performance.getEntriesByType("resource").filter(e => e.name.includes("/delivery/") || e.name.includes("/apis/")).slice(-6)
		.map(e => e.name.replace(location.origin, "").slice(0, 90) + " start " + Math.round(e.startTime) + " took " + Math.round(e.duration) + " ms" + " (response end " + Math.round(e.responseEnd) + ")").join("; ")`))
		}
		if d <= listFirstPageBudget {
			break
		}
	}
	best := slices.Min(clicks)
	t.Logf("first page of %d objects (%s setup): %v after the click (clicks: %v, the first uncached)", listSeed+3, s.name, best, clicks)
	if s.name == "embedded" && best > listFirstPageBudget {
		t.Errorf("the first page showed %v after the click at best (%v), budget %v", best, clicks, listFirstPageBudget)
	}
	p.waitText("10,003 objects")
	// The attribute column is headed by the attribute's name, not its
	// ApiIdentifier: English, German, and German's fallback to English.
	header := func(text string) string {
		return fmt.Sprintf(`[...document.querySelectorAll(".list-table thead th")].some(th => th.innerText.trim() === %q)`, text)
	}
	p.waitFor("the price column headed Price", header("Price"))
	if studioEval[bool](p, header("listPrice")) {
		t.Errorf("a column is headed by the ApiIdentifier listPrice")
	}
	p.shot("list")
	p.checkAccessibility("the list")
	// The row controls are buttons named after their row: the name opens
	// it, Delete at its end (Restore on a deleted row); no fake links.
	if bad := studioEval[string](p, `[...document.querySelectorAll("tr.list-row:not(.is-loading)")].filter(r => {
		const open = r.querySelector("td.col-name button.row-open"), del = r.querySelector("td.col-actions button");
		return !open || open.getAttribute("aria-label") !== "Open " + open.textContent || !del || del.getAttribute("aria-label") !== "Delete " + open.textContent;
	}).map(r => r.innerText).join(" | ")`); bad != "" {
		t.Errorf("rows without named open and delete buttons: %s", bad)
	}
	if n := studioEval[int](p, `document.querySelectorAll(".list-table a").length`); n != 0 {
		t.Errorf("%d links in the table, want buttons", n)
	}
	p.step("hover a row", studioWait, chromedp.Focus(chromedp.CSS(`tr.list-row[data-index="2"]`)))
	p.shot("row-controls")
	chooseLanguage := func(label, v string) {
		p.step("language "+v, studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.querySelector("select[aria-label=%s]"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, label, v)))
	}
	chooseLanguage("Language", "de")
	p.waitText("10.003 Objekte")
	p.waitFor("the price column headed Preis", header("Preis"))
	p.waitFor("the stock column headed by its English name (no German one)", header("Stock"))
	p.shot("list-german")
	chooseLanguage("Sprache", "en")
	p.waitFor("the price column headed Price again", header("Price"))

	// Scroll deep: row 7,500 by id is Item 07500; only the rows in view are in the page.
	p.step("scroll to row 7,500", studioWait, chromedp.Evaluate[chromedp.Void](`document.querySelector(".list-scroll").scrollTop = 7500 * 36`))
	p.waitFor("row 7,500 loaded", `[...document.querySelectorAll("tr.list-row")].some(r => r.getAttribute("aria-rowindex") === "7502" && r.innerText.includes("Item 07500"))`)
	if n := studioEval[int](p, `document.querySelectorAll("tr.list-row").length`); n > 80 {
		t.Errorf("%d rows rendered after scrolling deep, want only those in view (at most 80)", n)
	}
	if got := studioEval[string](p, `document.querySelector(".list-table").getAttribute("aria-rowcount")`); got != "10004" {
		t.Errorf("aria-rowcount = %s, want 10004", got)
	}
	p.shot("scrolled-deep")

	// Sort by the name both ways, then by the price column descending.
	firstName := `(document.querySelector("tr.list-row:not(.is-loading) td.col-name .row-open") || {}).textContent`
	p.click("Name")
	p.waitFor("sorted by name ascending", `document.querySelector("th[aria-sort=ascending]")?.innerText.includes("Name") && `+firstName+` === "Aurora lamp"`)
	p.click("Name")
	p.waitFor("sorted by name descending", `document.querySelector("th[aria-sort=descending]")?.innerText.includes("Name") && `+firstName+` === "Item 09999"`)
	if !strings.Contains(studioEval[string](p, `location.search`), "sort=-displayName") {
		t.Errorf("the address does not keep the sort: %s", studioEval[string](p, `location.search`))
	}
	p.shot("sorted-by-name-descending")
	p.click("Price")
	p.waitFor("sorted by price ascending", `document.querySelector("th[aria-sort=ascending]")?.innerText.includes("Price") && `+firstName+` !== "Item 09999"`)
	p.click("Price")
	p.waitFor("sorted by price descending", `document.querySelector("th[aria-sort=descending]")?.innerText.includes("Price") && `+firstName+` === "Item 09999"`)

	// Full-text search through the Index; / focuses the search box.
	p.step("press /", studioWait, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`), chromedp.KeyEvent("/"))
	if !studioEval[bool](p, `document.activeElement === document.querySelector("input[aria-label=Search]")`) {
		t.Errorf("/ did not focus the search box")
	}
	p.fill("Search", "lamp")
	p.waitText("3 objects")
	p.waitFor("the lamps", `[...document.querySelectorAll("tr.list-row td.col-name")].map(c => c.innerText).join("|").includes("Desk lamp")`)
	p.shot("search")
	p.fill("Search", "")
	p.waitText("10,003 objects")

	// The filter builder: listPrice >= 9990 is ten objects; a bad attribute's message shows at the builder.
	p.click("Filter")
	if got := studioEval[string](p, `(document.querySelector(".filter-builder button[aria-label='Add condition']") || {}).textContent ?? ""`); got != "Add" {
		t.Errorf("the builder's add button says %q, want Add (named Add condition)", got)
	}
	p.fill("Attribute of condition 1", "noSuchAttribute")
	p.fill("Value of condition 1", "1")
	p.click("Apply filter")
	p.waitFor("the API's message at the builder", `(document.querySelector(".filter-builder .problem") || {}).innerText?.includes("unknown attribute")`)
	p.shot("filter-error")
	p.fill("Attribute of condition 1", "listPrice")
	p.step("choose >=", studioWait, chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.querySelector("select[aria-label='Operator of condition 1']"); s.value = ">="; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	p.fill("Value of condition 1", "9990")
	p.waitText("listPrice>=9990")
	p.click("Apply filter")
	p.waitText("10 objects")
	p.shot("filtered")
	p.checkAccessibility("the filter builder")

	// A search with the filter: one Index condition carries the full text
	// and the filter's condition (the attribute's id, language-independent:
	// 0); the count is the Index's count of the same condition. "item"
	// alone is 10,003 objects, the filter alone 10 of Delivery, together
	// the ten items; "lamp" with the filter is none.
	p.step("record the Index requests", studioWait, chromedp.Evaluate[chromedp.Void](`(() => {
		window.__index = []; window.__delivery = 0; const f = window.fetch;
		window.fetch = (u, init) => {
			const url = String(u);
			if (url.includes("/apis/index/")) window.__index.push({url, body: JSON.parse(init.body)});
			if (url.includes("/delivery/")) window.__delivery++;
			return f(u, init);
		};
	})()`))
	p.fill("Search", "item")
	p.waitFor("the search with the filter counted", `window.__index.some(r => r.url.endsWith("/objectCount") && r.body.filter.fullText === "item") && document.querySelector(".list-count").innerText === "10 objects"`)
	p.waitFor("the ten items", `[...document.querySelectorAll("tr.list-row:not(.is-loading) td.col-name .row-open")].map(a => a.textContent).filter(n => n.startsWith("Item 0999")).length === 10`)
	p.shot("search-and-filter")
	var sent []struct {
		URL  string `json:"url"`
		Body struct {
			Filter json.RawMessage `json:"filter"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(studioEval[string](p, `JSON.stringify(window.__index)`)), &sent); err != nil {
		t.Fatalf("the recorded Index requests: %v", err)
	}
	wantSent := fmt.Sprintf(`{"objectTypeIds":[%d],"fullText":"item","uiLanguage":201,"deleted":false,"filters":[{"attrId":%d,"langId":0,"variantId":0,"compareOperator":5,"value":"9990"}]}`, typeID, priceID)
	var searches, counts int
	var wantFilter any
	if err := json.Unmarshal([]byte(wantSent), &wantFilter); err != nil {
		t.Fatal(err)
	}
	for _, r := range sent {
		var got any
		if err := json.Unmarshal(r.Body.Filter, &got); err != nil || !reflect.DeepEqual(got, wantFilter) {
			t.Errorf("%s sent filter %s, want %s", r.URL, r.Body.Filter, wantSent)
		}
		switch {
		case strings.HasSuffix(r.URL, "/objectCount"):
			counts++
		case strings.HasSuffix(r.URL, "/objects"):
			searches++
		}
	}
	if searches == 0 || counts != 1 {
		t.Errorf("the search with the filter sent %d searches and %d counts, want the search and one count: %+v", searches, counts, sent)
	}
	if n := studioEval[int](p, `window.__delivery`); n != 0 {
		t.Errorf("the search with the filter sent %d Delivery requests, want none", n)
	}
	p.fill("Search", "lamp")
	p.waitText("No objects match the search or the filter.")
	p.fill("Search", "")
	p.waitText("10 objects")

	// Delete Item 09999: gone from the live list, there with the deleted filter; restore it.
	row := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("tr.list-row")].find(r => (r.querySelector("td.col-name .row-open") || {}).textContent === %q)`, name)
	}
	p.step("select Item 09999", studioWait, chromedp.Click(chromedp.JSPath(`(`+row("Item 09999")+`).querySelector("input[type=checkbox]")`), chromedp.NodeVisible))
	p.click("Delete")
	p.waitFor("the confirmation", `!!document.querySelector("dialog[open]")`)
	p.waitText("Delete “Item 09999”?")
	p.shot("confirm-delete")
	p.step("confirm the deletion", studioWait, chromedp.Click(chromedp.CSS("dialog[open] .dialog-foot .btn-danger"), chromedp.NodeVisible))
	p.waitText("9 objects")
	if studioEval[bool](p, `!!`+row("Item 09999")) {
		t.Errorf("the deleted object is still in the live list")
	}
	p.shot("deleted")
	chooseDeleted := func(v string) {
		p.step("show "+v, studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.querySelector("select[aria-label=Show]"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, v)))
	}
	chooseDeleted("deleted")
	p.waitText("1 object")
	p.waitFor("the deleted object with its badge", `!!`+row("Item 09999")+` && (`+row("Item 09999")+`).innerText.includes("deleted")`)
	p.shot("deleted-filter")

	// A reload keeps the view (filter, deleted filter, sort).
	p.step("reload", studioWait, chromedp.Reload())
	p.waitText("1 object")
	p.waitFor("the same view after the reload", `location.search.includes("deleted=deleted") && location.search.includes("filter=") && !!`+row("Item 09999"))
	p.waitText("listPrice>=9990")

	// Restore with the row's own button.
	p.click("Restore Item 09999")
	p.waitText("Restore “Item 09999”?")
	p.step("confirm the restore", studioWait, chromedp.Click(chromedp.CSS("dialog[open] .dialog-foot .btn-primary"), chromedp.NodeVisible))
	p.waitText("No objects match the search or the filter.")
	chooseDeleted("live")
	p.waitText("10 objects")
	p.waitFor("restored in the live list", `!!`+row("Item 09999"))
	p.shot("restored")

	// Keyboard: arrow keys move between rows, Enter opens the object.
	p.step("focus the first row", studioWait, chromedp.Evaluate[chromedp.Void](`document.querySelector("tr.list-row[data-index='0']").focus()`))
	p.step("arrow down", studioWait, chromedp.KeyEvent(kb.ArrowDown))
	p.waitFor("ArrowDown moves the focus to the second row", `document.activeElement.getAttribute("data-index") === "1"`)
	want := studioEval[string](p, `document.activeElement.querySelector("td.col-id").textContent`)
	p.step("enter", studioWait, chromedp.KeyEvent(kb.Enter))
	p.waitFor("the object opens", fmt.Sprintf(`location.pathname.endsWith("/content/%s/%s")`, "listProduct", want))
	p.shot("object-opened")
}

// seedListType creates the attributes listPrice (Integer, named Price and
// Preis) and listStock (Integer, named Stock in English only), the type
// listProduct with listSeed items (Item 00000 … priced by their number)
// and three lamps on branch, and waits until Delivery shows them all.
func seedListType(t *testing.T, base string, branch int64) (name string, priceID, typeID int64) {
	t.Helper()
	s := seedProducts(t, base, branch, "list", "List product")
	return s.name, s.priceID, s.typeID
}

// seededProducts is what seedProducts created.
type seededProducts struct {
	name            string
	priceID, typeID int64
	// items are the listSeed items' ids (not the lamps'), in order.
	items []int64
}

// seedProducts creates the attributes <prefix>Price and <prefix>Stock, the
// type <prefix>Product (named name) with listSeed items and three lamps on
// branch (ApiIdentifiers are unique across branches, hence the prefix),
// and waits until Delivery shows them all.
func seedProducts(t *testing.T, base string, branch int64, prefix, name string) seededProducts {
	t.Helper()
	integer := value(1001, 0, "Integer") + "," + value(1004, 0, false) + "," + value(1017, 0, false)
	model := `{"objects":[{"meta":{"typeRef":10,"apiIdentifier":"` + prefix + `Price"},"values":[` + value(1000, 201, "Price") + "," +
		value(1000, 202, "Preis") + "," + integer + `]},` +
		`{"meta":{"typeRef":10,"apiIdentifier":"` + prefix + `Stock"},"values":[` + value(1000, 201, "Stock") + "," + integer + `]},` +
		`{"meta":{"typeRef":0,"apiIdentifier":"` + prefix + `Product"},"values":[` + value(1000, 201, name) + `]}]}`
	var w writeAnswer
	if err := json.Unmarshal(mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch), model), &w); err != nil || len(w.CreatedObjectIDs) != 3 {
		t.Fatalf("create the model: %v", err)
	}
	attr, stock, typ := w.CreatedObjectIDs[0], w.CreatedObjectIDs[1], w.CreatedObjectIDs[2]
	obj := func(name string, price int) string {
		return fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s,%s]}`, typ, value(1000, 201, name), value(attr, 0, price), value(stock, 0, price%7))
	}
	started := time.Now()
	items := make([]int64, 0, listSeed)
	const batch = 1000
	for i := 0; i < listSeed; i += batch {
		var b strings.Builder
		for j := i; j < i+batch && j < listSeed; j++ {
			if j > i {
				b.WriteByte(',')
			}
			b.WriteString(obj(fmt.Sprintf("Item %05d", j), j))
		}
		var created writeAnswer
		raw := mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/objects", base, branch), `{"objects":[`+b.String()+`]}`)
		if err := json.Unmarshal(raw, &created); err != nil || len(created.CreatedObjectIDs) != min(batch, listSeed-i) {
			t.Fatalf("create items %d…: %v", i, err)
		}
		items = append(items, created.CreatedObjectIDs...)
	}
	tx := writeOn(t, http.MethodPost, base, branch, obj("Aurora lamp", 5)+","+obj("Desk lamp", 5)+","+obj("Floor lamp", 5))
	// Indexing 10,000 objects may take longer than one wait of Delivery
	// (503 "not visible in time"): ask again until the deadline.
	u := fmt.Sprintf("%s/delivery/api/branches/%d/types/%sProduct/count", base, branch, prefix)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		code, b, err := call(http.DefaultClient, http.MethodGet, u, "", "X-Cms-Min-Version", fmt.Sprint(tx), "X-Cms-Max-Wait", "10s")
		if err == nil && code == http.StatusOK && strings.Contains(string(b), fmt.Sprintf(`"count":%d`, listSeed+3)) {
			break
		}
		if err != nil || code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("GET %s at version %d = %d %v: %s", u, tx, code, err, b)
		}
	}
	t.Logf("seeded %d objects and saw them in Delivery in %v", listSeed+3, time.Since(started).Round(time.Millisecond))
	return seededProducts{name: name, priceID: attr, typeID: typ, items: items}
}
