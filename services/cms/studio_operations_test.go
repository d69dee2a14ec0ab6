package main

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func init() {
	addStudioJourney("operations", studioOperationsJourney)
}

// studioOperationsJourney: the administrator opens Operations from the
// sections and sees every component up, the readiness, and the indexer's
// lag and parked events as numbers; a write (a branch created through
// Management) makes Management's request total move without a click (the
// view reads /metrics again every few seconds); Refresh now reads at once
// (keyboard: Enter on the focused button); in German it says "Betrieb",
// "erreichbar". Once the view is closed it
// reads no more. Petra, a writer of one branch, gets no Operations entry
// and, at its address, only the note that administrators see it (and no
// read of /metrics).
func studioOperationsJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Operations work")
	createStudioUser(t, s.base, "petra", "Petra Klein", "petra-password-1", branch)

	admin := s.page(t, "admin")
	admin.login()
	admin.waitFor("the admin flag is known", `document.querySelector("nav.sections")?.dataset.admin === "yes"`)
	admin.click("Operations")
	admin.waitFor("the address names the view", `location.pathname.endsWith("/operations")`)
	admin.waitFor("the process is ready", `document.querySelector("[data-ready]")?.dataset.ready === "true"`)
	for _, c := range []string{"store", "events", "search", "cache"} {
		admin.waitFor(c+" is listed up", fmt.Sprintf(`document.querySelector('[data-component=%q]')?.dataset.up === "true"`, c))
	}
	if down := studioEval[string](admin, `[...document.querySelectorAll('[data-component][data-up="false"]')].map(e => e.dataset.component).join(",")`); down != "" {
		t.Errorf("components shown down on a healthy process: %s", down)
	}
	figure := func(name string) string {
		return studioEval[string](admin, fmt.Sprintf(`document.querySelector('[data-figure=%q] dd')?.textContent ?? ""`, name))
	}
	admin.waitFor("the lag figures are numbers", `/^[0-9.,]+$/.test(document.querySelector('[data-figure="lag-events"] dd')?.textContent ?? "") && `+
		`/^[0-9.,]+$/.test(document.querySelector('[data-figure="lag-seconds"] dd')?.textContent ?? "")`)
	if p := figure("parked"); p != "0" {
		t.Errorf("parked events on a fresh process: %q, want 0", p)
	}
	t.Logf("operations: %s setup: lag %s events, %s s; parked %s; 5xx %s; shed %s; live subscribers %s; jobs pending %s",
		s.name, figure("lag-events"), figure("lag-seconds"), figure("parked"), figure("5xx"), figure("shed"), figure("subscribers"), figure("jobs-pending"))
	admin.shot("operations")
	admin.checkAccessibility("the operations view")

	// A write moves Management's request total at the next refresh, without a click.
	total := func() int64 {
		v := studioEval[string](admin, `document.querySelector('[data-group="management"] td[data-total]')?.dataset.total ?? "-1"`)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("management total %q: %v", v, err)
		}
		return n
	}
	before := total()
	if before < 1 {
		t.Fatalf("management total before the write: %d, want the studio's own calls counted", before)
	}
	start := time.Now()
	createBranch(t, s.base, "Counted write")
	admin.waitFor("the management total moved", fmt.Sprintf(`+(document.querySelector('[data-group="management"] td[data-total]')?.dataset.total ?? 0) > %d`, before))
	t.Logf("operations: %s setup: management requests %d → %d, shown %v after the write", s.name, before, total(), time.Since(start).Round(10*time.Millisecond))
	admin.waitFor("a rate per second is shown", `/[0-9]/.test(document.querySelector('[data-group="management"] td:last-child')?.textContent ?? "")`)
	admin.shot("after-write")

	// Refresh now, by keyboard: one more read of /metrics at once.
	reads := func() int {
		return int(studioEval[float64](admin, `performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname === "/metrics").length`))
	}
	n := reads()
	admin.step("Refresh now by keyboard", studioWait, chromedp.Focus(button("Refresh now")), chromedp.KeyEvent("\r"))
	admin.waitFor("Refresh now read /metrics", fmt.Sprintf(`performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname === "/metrics").length > %d`, n))

	// In German.
	language := func(label, v string) {
		admin.step("language "+v, studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.querySelector("select[aria-label=%s]"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, label, v)))
	}
	language("Language", "de")
	admin.waitText("Dieser Prozess ist bereit.")
	admin.waitFor("the components up in German", `[...document.querySelectorAll("[data-component] .ops-up-text")].every(e => e.textContent === "erreichbar")`)
	admin.waitFor("the German entry is current", `document.querySelector("nav.sections [aria-current=page]")?.textContent.trim() === "Betrieb"`)
	admin.shot("operations-german")
	admin.checkAccessibility("the operations view in German")
	language("Sprache", "en")
	admin.waitText("This process is ready.")

	// Closed, the view reads no more.
	admin.click("Content")
	admin.waitFor("the content view", `!location.pathname.endsWith("/operations")`)
	time.Sleep(500 * time.Millisecond) // a read started before the close may still finish
	n = reads()
	time.Sleep(4 * time.Second) // more than the refresh interval (3 s)
	if after := reads(); after != n {
		t.Errorf("the closed view read /metrics %d more times", after-n)
	}

	// Petra, no administrator: no entry, and the address shows only the note.
	other := s.page(t, "petra")
	other.signInAs("petra", "petra-password-1")
	other.waitFor("the admin flag is known", `document.querySelector("nav.sections")?.dataset.admin === "no"`)
	if studioEval[bool](other, `[...document.querySelectorAll("nav.sections button")].some(b => b.textContent.trim() === "Operations")`) {
		t.Error("a non-administrator sees the Operations entry")
	}
	other.open(fmt.Sprintf("/studio/b/%d/operations", branch))
	other.waitText("Only administrators see the operations of the installation.")
	if studioEval[bool](other, `performance.getEntriesByType("resource").some(e => new URL(e.name).pathname === "/metrics")`) {
		t.Error("the studio read /metrics for a non-administrator")
	}
	other.shot("not-for-petra")
	other.checkAccessibility("the operations address for a non-administrator")
}
