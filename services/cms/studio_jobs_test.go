package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func init() {
	addStudioJourney("jobs", studioJobsJourney)
}

// jobsExportWait bounds the 10,000-object export, from the click on Start to
// its artifact listed.
const jobsExportWait = 3 * time.Minute

// jobSample is what the page showed of the open job at one moment.
type jobSample struct {
	Path  string   `json:"path"`
	State string   `json:"state"`
	Value *float64 `json:"v"`
	Lines int      `json:"lines"`
	ETA   bool     `json:"eta"`
}

// jobsWatch records, every 25 ms, what the page shows of the open job (the
// bar's value, the log's lines, the state, the estimate), each change once.
const jobsWatch = `(() => {
	window.__jobSeen = []; let last = "";
	const read = () => {
		const pr = document.querySelector(".job-progress"), log = document.querySelector(".job-log"), st = document.querySelector(".job-status .job-state");
		return {path: location.pathname, state: st ? st.dataset.state : "", v: pr && pr.position >= 0 ? pr.value : null,
			lines: log ? log.textContent.split("\n").filter(x => /^\d{4}-\d\d-\d\dT/.test(x)).length : 0, eta: !!document.querySelector(".job-eta")};
	};
	clearInterval(window.__jobTimer);
	window.__jobTimer = setInterval(() => { const r = read(); const k = JSON.stringify(r); if (k !== last) { last = k; r.t = performance.now(); window.__jobSeen.push(r); } }, 25);
})()`

// studioJobsJourney: on a branch of its own with 10,003 objects, the
// administrator opens Jobs (the queue holds a scheduled release), starts
// an export (JSON) of 10,000 objects by id and follows it from start to
// artifact: the bar advances, the estimate shows, the log grows; the
// artifact downloaded holds exactly the 10,000 objects. She kills the
// waiting release and restarts it, filters the queue by state (kept in the
// address), imports a small JSON file through job input, exports two rows
// selected in the content list (the list's Export links to the job), and
// reads the screen in German. Screenshots per step; axe on each view.
func studioJobsJourney(t *testing.T, s *studioSetup) {
	began := time.Now()
	branch := createBranch(t, s.base, "Export catalogue")
	seeded := seedProducts(t, s.base, branch, "export", "Export product")
	// A release of the branch scheduled in two hours waits in its queue
	// (state New) until it is killed: the job to kill and restart.
	at := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	var release struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(mustCall(t, http.StatusOK, http.MethodPost, fmt.Sprintf("%s/apis/cms/v1/branches/%d/schedule", s.base, branch),
		`{"at":"`+at+`","comment":"studio jobs journey"}`), &release); err != nil || release.ID == 0 {
		t.Fatalf("schedule a release: %v", err)
	}
	t.Cleanup(func() {
		// Never let the release go live in a later journey: kill it if it waits.
		_, _, _ = call(http.DefaultClient, http.MethodPatch, fmt.Sprintf("%s/apis/cms/v1/jobs/%d", s.base, release.ID), `{"state":0}`)
	})

	p := s.page(t, "admin")
	p.login()
	jobsPath := fmt.Sprintf("/studio/b/%d/jobs", branch)
	p.open(jobsPath)
	releaseLink := fmt.Sprintf(`document.querySelector('.job-nav a[href$="/jobs/%d"]')`, release.ID)
	p.waitFor("the queue lists the release", "!!"+releaseLink+` && `+releaseLink+`.dataset.state === "new"`)
	p.shot("queue")
	p.checkAccessibility("the queue")

	// Start the export of 10,000 objects by id: the ids pasted.
	p.click("Start a job")
	p.waitFor("the start dialog", `!!document.querySelector("dialog[open] .job-form")`)
	clickLabel(p, "Export (JSON)")
	clickLabel(p, "The objects with these ids")
	ids := make([]string, len(seeded.items))
	for i, id := range seeded.items {
		ids[i] = fmt.Sprint(id)
	}
	pasted, _ := json.Marshal(strings.Join(ids, "\n"))
	p.step("paste the ids", studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const ta = document.querySelector("dialog[open] textarea"); ta.value = %s; ta.dispatchEvent(new Event("input", {bubbles: true})); })()`, pasted)))
	p.shot("start-export")
	p.checkAccessibility("the start dialog")
	p.step("watch the job", studioWait, chromedp.Evaluate[chromedp.Void](jobsWatch))
	clicked := time.Now()
	p.step("start", studioWait, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("dialog[open] .dialog-foot button")].find(b => b.textContent.trim() === "Start")`), chromedp.NodeVisible))
	p.waitFor("the job opens", `/\/jobs\/\d+$/.test(location.pathname)`)
	exportPath := studioEval[string](p, `location.pathname`)
	// The bar part way: a screenshot of the job running.
	waitWithin(p, "the bar part way", jobsExportWait, `(() => { const pr = document.querySelector(".job-progress"); `+
		`return (pr && pr.position > 0 && pr.position < 1) || document.querySelector(".job-status .job-state")?.dataset.state === "succeeded"; })()`)
	p.shot("export-running")
	waitWithin(p, "the export succeeds with its artifact", jobsExportWait,
		`document.querySelector(".job-status .job-state")?.dataset.state === "succeeded" && !!document.querySelector(".job-artifacts button")`)
	toArtifact := time.Since(clicked)
	p.shot("export-succeeded")
	p.checkAccessibility("the finished job")
	var seen []jobSample
	if err := json.Unmarshal([]byte(studioEval[string](p, `clearInterval(window.__jobTimer), JSON.stringify(window.__jobSeen)`)), &seen); err != nil {
		t.Fatal(err)
	}
	checkFollowed(t, seen, exportPath, false)
	if log := studioEval[string](p, `document.querySelector(".job-log").textContent`); !strings.Contains(log, "exported 10000 objects to objects.json") ||
		!strings.Contains(log, "5000 of 10000 objects exported") {
		t.Errorf("the log does not say how far the export got and that it ended: %s", log)
	}

	// Download the artifact: the bytes the studio saves, counted.
	p.step("catch the download", studioWait, chromedp.Evaluate[chromedp.Void](`(() => {
		window.__blobs = []; const orig = URL.createObjectURL;
		URL.createObjectURL = (b) => { window.__blobs.push(b); return orig.call(URL, b); };
		document.addEventListener("click", (e) => { if (e.target instanceof HTMLAnchorElement && e.target.download) window.__saved = e.target.download; }, true);
	})()`))
	p.click("Download objects.json")
	p.waitFor("the file is saved", `window.__saved === "objects.json"`)
	got := studioEval[string](p, `window.__blobs.at(-1).text().then(t => JSON.stringify(JSON.parse(t).objects.map(o => o.meta.id)))`)
	var exported []int64
	if err := json.Unmarshal([]byte(got), &exported); err != nil {
		t.Fatal(err)
	}
	slices.Sort(exported)
	want := slices.Clone(seeded.items)
	slices.Sort(want)
	if !slices.Equal(exported, want) {
		t.Errorf("objects.json holds %d objects, want the %d selected (first %v)", len(exported), len(want), exported[:min(3, len(exported))])
	}
	t.Logf("the export of %d objects (%s setup): %v from the click on Start to its artifact; %d states seen", len(exported), s.name,
		toArtifact.Round(time.Millisecond), len(seen))

	// A re-index of the branch (10,003 documents, in place) runs long enough
	// to be watched part way: the bar advances with an estimate, the log grows.
	p.click("Start a job")
	p.waitFor("the start dialog", `!!document.querySelector("dialog[open] .job-form")`)
	clickLabel(p, "Re-index")
	p.step("watch the re-index", studioWait, chromedp.Evaluate[chromedp.Void](jobsWatch))
	p.step("start the re-index", studioWait, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("dialog[open] .dialog-foot button")].find(b => b.textContent.trim() === "Start")`), chromedp.NodeVisible))
	p.waitFor("the re-index opens", `/\/jobs\/\d+$/.test(location.pathname) && location.pathname !== `+jsString(exportPath))
	reindexPath := studioEval[string](p, `location.pathname`)
	reindexStarted := time.Now()
	waitWithin(p, "the re-index part way", jobsExportWait, `(() => { const pr = document.querySelector(".job-progress"); `+
		`return (pr && pr.position > 0 && pr.position < 1 && !!document.querySelector(".job-eta")) || document.querySelector(".job-status .job-state")?.dataset.state === "succeeded"; })()`)
	p.shot("reindex-running")
	waitWithin(p, "the re-index succeeds", jobsExportWait, `document.querySelector(".job-status .job-state")?.dataset.state === "succeeded"`)
	p.shot("reindex-succeeded")
	seen = nil
	if err := json.Unmarshal([]byte(studioEval[string](p, `clearInterval(window.__jobTimer), JSON.stringify(window.__jobSeen)`)), &seen); err != nil {
		t.Fatal(err)
	}
	t.Logf("the re-index of branch %d (%s setup): %v in the studio", branch, s.name, time.Since(reindexStarted).Round(time.Millisecond))
	checkFollowed(t, seen, reindexPath, true)

	// Kill the waiting release, then restart it: it waits for its time again.
	p.step("open the release", studioWait, chromedp.Click(chromedp.JSPath(releaseLink), chromedp.NodeVisible))
	p.waitFor("the release opens", fmt.Sprintf(`location.pathname.endsWith("/jobs/%d") && !!document.querySelector(".job-status .job-state[data-state=new]")`, release.ID))
	p.waitText("Waits until")
	p.shot("release-waiting")
	p.click("Kill")
	p.waitFor("the release is killed", `document.querySelector(".job-status .job-state")?.dataset.state === "error"`)
	if msg := studioEval[string](p, `document.querySelector(".job-message")?.textContent ?? ""`); !strings.Contains(msg, "killed by admin") {
		t.Errorf("the killed job says %q, want who killed it", msg)
	}
	p.shot("release-killed")
	p.click("Restart")
	p.waitFor("the release waits again", `document.querySelector(".job-status .job-state")?.dataset.state === "new"`)
	p.waitText("Restarts")
	p.shot("release-restarted")
	var rj struct {
		State    int `json:"state"`
		Restarts int `json:"restarts"`
	}
	if err := json.Unmarshal(mustCall(t, http.StatusOK, http.MethodGet, fmt.Sprintf("%s/apis/cms/v1/jobs/%d", s.base, release.ID), ""), &rj); err != nil || rj.State != 0 || rj.Restarts != 1 {
		t.Errorf("the restarted release: %+v %v, want state 0 with 1 restart", rj, err)
	}

	// The queue filtered by state, kept in the address.
	chooseState := func(v string) {
		p.step("state "+v, studioWait, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(() => { const s = document.getElementById("jobs-state"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); })()`, v)))
	}
	queueStates := `[...document.querySelectorAll(".job-nav a")].map(a => a.dataset.state).join(",")`
	chooseState("succeeded")
	p.waitFor("only succeeded jobs (the export and the re-index)", `location.search === "?state=succeeded" && `+queueStates+` === "succeeded,succeeded"`)
	p.shot("queue-succeeded")
	chooseState("new")
	p.waitFor("only the waiting release", queueStates+` === "new" && !!`+releaseLink)
	p.step("reload", studioWait, chromedp.Reload())
	p.waitFor("the filter survives a reload", `document.getElementById("jobs-state")?.value === "new" && `+queueStates+` === "new"`)
	p.shot("queue-queued")
	p.checkAccessibility("the filtered queue")
	chooseState("")
	p.waitFor("every state again", `location.search === "" && `+queueStates+`.split(",").length >= 2`)

	// Import a small JSON file through job input.
	file := filepath.Join(t.TempDir(), "two-products.json")
	input := fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s]},{"meta":{"typeRef":%d},"values":[%s]}]}`,
		seeded.typeID, value(1000, 201, "Imported one"), seeded.typeID, value(1000, 201, "Imported two"))
	if err := os.WriteFile(file, []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	p.click("Start a job")
	p.waitFor("the start dialog", `!!document.querySelector("dialog[open] .job-form")`)
	clickLabel(p, "Import (JSON)")
	p.step("choose the file", studioWait, chromedp.SetUploadFiles(chromedp.CSS(`dialog[open] input[type=file]`), []string{file}))
	p.shot("start-import")
	p.step("start the import", studioWait, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("dialog[open] .dialog-foot button")].find(b => b.textContent.trim() === "Start")`), chromedp.NodeVisible))
	waitWithin(p, "the import succeeds", time.Minute, `/\/jobs\/\d+$/.test(location.pathname) && `+
		`document.querySelector(".job-status .job-state")?.dataset.state === "succeeded" && document.querySelector(".job-log")?.textContent.includes("imported: 2 objects created")`)
	p.shot("import-succeeded")
	u := fmt.Sprintf("%s/delivery/api/branches/%d/types/exportProduct/count", s.base, branch)
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, b, err := call(http.DefaultClient, http.MethodGet, u, "")
		if err == nil && code == http.StatusOK && strings.Contains(string(b), fmt.Sprintf(`"count":%d`, listSeed+5)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the import Delivery counts %s (%d %v), want %d", b, code, err, listSeed+5)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The content list's selection: Export starts the job and links to it.
	p.open(fmt.Sprintf("/studio/b/%d/content/exportProduct", branch))
	p.waitFor("the list's rows", `document.querySelectorAll("tr.list-row:not(.is-loading)").length >= 3`)
	for _, i := range []string{"0", "1"} {
		p.step("select row "+i, studioWait, chromedp.Focus(chromedp.CSS(`tr.list-row[data-index="`+i+`"]`)), chromedp.KeyEvent(" "))
	}
	p.waitText("2 selected")
	p.click("Export")
	p.waitFor("the export dialog", `!!document.querySelector("dialog[open]")`)
	p.checkAccessibility("the list's export dialog")
	p.click("Start export")
	p.waitFor("the job is linked", `[...document.querySelectorAll("dialog[open] a")].some(a => /\/jobs\/\d+$/.test(a.getAttribute("href")))`)
	p.shot("list-export-started")
	p.step("open the job", studioWait, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("dialog[open] .dialog-foot button")].find(b => b.textContent.startsWith("Open job"))`), chromedp.NodeVisible))
	waitWithin(p, "the selection's export succeeds", time.Minute, `/\/jobs\/\d+$/.test(location.pathname) && `+
		`document.querySelector(".job-status .job-state")?.dataset.state === "succeeded" && document.querySelector(".job-log")?.textContent.includes("exported 2 objects")`)
	p.shot("list-export-succeeded")

	// German.
	p.step("German", studioWait, chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.querySelector("select[aria-label=Language]"); s.value = "de"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	p.waitText("Erfolgreich")
	p.waitText("Protokoll")
	p.shot("job-german")
	p.checkAccessibility("the job in German")
	t.Logf("jobs journey (%s setup): %v in all", s.name, time.Since(began).Round(time.Millisecond))
}

// checkFollowed: what the page showed of a job while it ran: the states
// in order, the bar never going back, the log never shrinking, the end at
// 100 %; with partway, also the bar part way with an estimate and the log
// growing while it ran (a 10,000-object export is done in about half a
// second, faster than the page reads it: only the re-index is watched so).
func checkFollowed(t *testing.T, seen []jobSample, path string, partwayToo bool) {
	t.Helper()
	rank := map[string]int{"new": 0, "running": 1, "succeeded": 2, "error": 2}
	var last, lines, partway, grew, etas, unfinished int
	var bar float64
	for _, x := range seen {
		if x.Path != path || x.State == "" {
			continue
		}
		if rank[x.State] < 2 {
			unfinished++
		}
		if r := rank[x.State]; r < last {
			t.Errorf("the state went back to %s: %+v", x.State, seen)
		} else {
			last = r
		}
		if x.State == "error" {
			t.Fatalf("the job failed: %+v", x)
		}
		if x.Value != nil {
			if *x.Value < bar {
				t.Errorf("the bar went back from %v to %v", bar, *x.Value)
			}
			bar = *x.Value
			if bar > 0 && bar < 100 && x.State == "running" {
				partway++
				if x.ETA {
					etas++
				}
			}
		}
		if x.Lines < lines {
			t.Errorf("the log shrank from %d to %d lines", lines, x.Lines)
		}
		if x.Lines > lines && lines > 0 {
			grew++
		}
		lines = x.Lines
	}
	t.Logf("followed the job: %d samples, the bar part way in %d (with an estimate in %d), the log grew %d times to %d lines, the bar at %v",
		len(seen), partway, etas, grew, lines, bar)
	if partwayToo && (partway == 0 || etas == 0) {
		t.Errorf("the bar never showed the job part way with an estimate: %+v", seen)
	}
	if partwayToo && grew == 0 {
		t.Errorf("the log never grew while the job ran: %+v", seen)
	}
	if last != rank["succeeded"] || unfinished == 0 {
		t.Errorf("the page did not follow the job to its end: %+v", seen)
	}
	if bar != 100 {
		t.Errorf("the bar ended at %v, want 100", bar)
	}
}

// clickLabel clicks the label (a radio, a checkbox) with this text.
func clickLabel(p *studioPage, text string) {
	p.t.Helper()
	q, _ := json.Marshal(text)
	p.step("choose "+text, studioWait, chromedp.Click(chromedp.JSPath(fmt.Sprintf(
		`[...document.querySelectorAll("dialog[open] label")].find(l => l.textContent.trim() === %s)`, q)), chromedp.NodeVisible))
}

// waitWithin waits up to d until the JavaScript condition holds (waitFor
// with a longer bound, for a job that runs a while).
func waitWithin(p *studioPage, what string, d time.Duration, cond string) {
	p.t.Helper()
	p.step(what, d, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))(ctx, tg)
		return err
	}))
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
