package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func init() {
	addStudioJourney("live", studioLiveJourney)
}

// studioLiveSeenWithin is how soon after another editor's save the
// activity must show it on the embedded setup (the issue's "within a
// second"); the distributed setup (Elasticsearch's refresh, NATS) is
// measured and reported, bounded by studioWait.
const studioLiveSeenWithin = time.Second

// studioLiveJourney: the editor sees others' work live. The top bar says
// the change stream is live; the activity popover is empty at first. Maria
// (another user, in another browser) saves an object through the API with
// her studio session's token: within a second the editor's open activity
// says "Maria changed <object>" (her display name, the object's name) and
// the open list shows the row's new name, in place. A second change (a new
// object) while the popover is closed shows as a count on the indicator and
// as a new row and count in the list; a click on an activity row opens the
// object. The open object reloads by itself on Maria's next save and says
// who changed it; with unsaved edits it keeps them and asks (Show changes,
// Reload).
func studioLiveJourney(t *testing.T, s *studioSetup) {
	// A branch of its own: the other journeys see nothing of its model.
	branch := createBranch(t, s.base, "Live work")
	typeID, objID, teaser := setupLiveModel(t, s.base, branch)
	tx := createStudioUser(t, s.base, "maria", "Maria Keller", "maria-password-1", branch)
	// The setup's changes are released before the editor subscribes (its
	// stream starts from now): the activity starts empty.
	waitDelivered(t, s, branch, tx)

	editor := s.page(t, "editor")
	editor.login()
	editor.open(fmt.Sprintf("/studio/b/%d/content/%d", branch, typeID))
	editor.waitFor("the list shows the object", `[...document.querySelectorAll(".list-table tr.list-row")].some(r => r.innerText.includes("Spring sale"))`)
	editor.waitFor("the indicator says live", `!!document.querySelector(".live-indicator.live-live")`)
	editor.shot("live")
	editor.step("open the activity", studioWait, clickCSS(".live-indicator"))
	editor.waitText("No changes by others since you opened the studio.")
	editor.shot("activity-empty")
	editor.checkAccessibility("the activity popover")

	other := s.page(t, "other")
	other.signInAs("maria", "maria-password-1")
	other.shot("signed-in")

	// The editor notes when it first shows the change; Maria's page notes
	// when it started the save. Both pages are tabs of one browser: one clock.
	want := "Maria Keller changed Spring sale"
	editor.step("watch the activity and the list", studioWait, evalJS(fmt.Sprintf(`(() => { window.__seen = 0; window.__row = 0; const want = %q;
		const check = () => { const el = document.getElementById("live-activity"); if (!window.__seen && el && el.innerText.includes(want)) window.__seen = Date.now();
			if (!window.__row && [...document.querySelectorAll(".list-table tr.list-row")].some(r => r.innerText.includes("Spring sale (final)"))) window.__row = Date.now(); };
		new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true}); })()`, want)))
	saveAt := saveAs(other, branch, fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, objID, typeID,
		value(1000, 201, "Spring sale (final)")), http.MethodPatch)
	editor.waitFor("the editor sees Maria's change", `window.__seen > 0`)
	editor.waitFor("the list row shows the new name", `window.__row > 0`)
	for _, seen := range []struct{ what, at string }{{"the activity", "__seen"}, {"the list row", "__row"}} {
		took := time.Duration(studioEval[float64](editor, "window."+seen.at)-saveAt) * time.Millisecond
		t.Logf("live: %s setup: %s showed Maria's change %v after she started her save", s.name, seen.what, took)
		if s.name == "embedded" && took > studioLiveSeenWithin {
			t.Errorf("%s showed the change after %v, want at most %v", seen.what, took, studioLiveSeenWithin)
		}
	}
	editor.waitText("Spring sale (final)")
	editor.waitText("just now")
	editor.shot("activity-shows-change")
	editor.checkAccessibility("the activity with a change")

	// Closed (Escape), a new change counts on the indicator.
	editor.step("close with Escape", studioWait, evalJS(`document.getElementById("live-activity").dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", bubbles: true}))`))
	editor.waitFor("the popover closed and the indicator has the focus",
		`!document.getElementById("live-activity") && document.activeElement === document.querySelector(".live-indicator")`)
	saveAs(other, branch, fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[%s]}]}`, typeID, value(1000, 201, "Autumn sale")), http.MethodPost)
	editor.waitFor("the indicator counts one new change", `document.querySelector(".live-indicator").textContent === "Live updates: Live, 1 new"`)
	editor.waitFor("the list has the new object and counts it", `[...document.querySelectorAll(".list-table tr.list-row")].some(r => r.innerText.includes("Autumn sale")) && `+
		`document.querySelector(".list-count").textContent === "2 objects"`)
	editor.shot("new-change-counted")
	editor.step("open the activity again", studioWait, clickCSS(".live-indicator"))
	editor.waitText("Maria Keller created Autumn sale")
	editor.waitFor("the count is cleared", `!document.querySelector(".live-badge")`)
	editor.shot("activity-two-changes")

	// A row opens its object.
	editor.step("open the changed object", studioWait, clickCSS(`#live-activity button.live-row[title="Open Spring sale (final)"]`))
	editor.waitFor("the address names the object", fmt.Sprintf(`location.pathname === "/studio/b/%d/content/%d/%d"`, branch, typeID, objID))
	editor.waitValue(teaser, 201, "Spring teaser")
	editor.shot("object-opened")

	// The open object: Maria's save reloads it by itself (nothing unsaved)
	// and says who changed it, within a second on the embedded setup.
	editor.step("watch the notice", studioWait, evalJS(`(() => { window.__notice = 0;
		new MutationObserver(() => { if (!window.__notice && (document.querySelector(".live-notice")?.innerText ?? "").includes("Maria Keller changed this object just now."))
			window.__notice = Date.now(); }).observe(document.body, {subtree: true, childList: true, characterData: true}); })()`))
	patchTeaser := func(text string) float64 {
		return saveAs(other, branch, fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[%s]}]}`, objID, value(teaser, 201, text)), http.MethodPatch)
	}
	saveAt = patchTeaser("Teaser by Maria")
	editor.waitFor("the object says who changed it", `window.__notice > 0`)
	took := time.Duration(studioEval[float64](editor, `window.__notice`)-saveAt) * time.Millisecond
	t.Logf("live: %s setup: the open object's notice showed Maria's change %v after she started her save", s.name, took)
	if s.name == "embedded" && took > studioLiveSeenWithin {
		t.Errorf("the notice showed the change after %v, want at most %v", took, studioLiveSeenWithin)
	}
	editor.waitValue(teaser, 201, "Teaser by Maria")
	editor.shot("object-reloaded-with-notice")
	editor.click("Dismiss")

	// With unsaved edits nothing is overwritten: the notice asks.
	editor.fill("Teaser (en-US)", "My own teaser")
	editor.waitText("Unsaved changes")
	patchTeaser("Second by Maria")
	editor.waitText("Maria Keller changed this object just now. Your unsaved edits are kept.")
	editor.waitFor("the offer to show the changes", "!!"+string(button("Show changes")))
	editor.waitValue(teaser, 201, "My own teaser")
	editor.shot("object-notice-keeps-edits")
	editor.checkAccessibility("the object with the live notice")
	editor.click("Reload (drop my edits)")
	editor.waitValue(teaser, 201, "Second by Maria")
	editor.waitFor("no unsaved changes", `!document.body.innerText.includes("Unsaved changes")`)
	editor.shot("object-reloaded")
}

// waitDelivered waits until Delivery shows transaction tx on branch (the
// index may lag behind a journey that seeded many objects: up to a minute).
func waitDelivered(t *testing.T, s *studioSetup, branch, tx int64) {
	t.Helper()
	visible := fmt.Sprintf("%s/delivery/api/branches/%d/objects?take=1", s.base, branch)
	for deadline := time.Now().Add(time.Minute); ; {
		code, b, err := call(http.DefaultClient, http.MethodGet, visible, "", "X-Cms-Min-Version", fmt.Sprint(tx), "X-Cms-Max-Wait", "5s")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the setup (transaction %d) is not in Delivery after a minute: %d %v %s", tx, code, err, b)
		}
	}
	waitReleased(t, s, branch, tx)
}

// waitReleased waits until the process's change stream of branch has
// released transaction tx: a stream that starts "from now" after that
// starts after tx. Delivery seeing tx is not enough: the stream releases a
// change after the index applied it and the cache evicted it, a moment
// later on a loaded machine, and a page subscribing in that moment gets
// the setup's own changes as news.
func waitReleased(t *testing.T, s *studioSetup, branch, tx int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/delivery/api/branches/%d/changes?since=%d", s.base, branch, tx-1), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", crashPassword)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the change stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("the change stream answered %d: %s", resp.StatusCode, b)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "id: "); ok {
			if v, err := strconv.ParseInt(id, 10, 64); err == nil && v >= tx {
				return
			}
		}
	}
	t.Fatalf("the change stream of branch %d did not release transaction %d within a minute: %v", branch, tx, lines.Err())
}

// setupLiveModel creates, on branch, a type "Press release" whose form
// lists a language-dependent Teaser, and its object "Spring sale".
func setupLiveModel(t *testing.T, base string, branch int64) (typeID, objID, teaser int64) {
	t.Helper()
	return setupTeaserModel(t, base, branch, "live", "pressRelease", "Press release", "Spring sale", "Spring teaser")
}

// setupTeaserModel creates, on branch, a type (ApiIdentifier typeAPI, named
// typeName) whose form lists a language-dependent Teaser (ApiIdentifier
// prefix+"Teaser"), and one object of it named objName with the teaser.
func setupTeaserModel(t *testing.T, base string, branch int64, prefix, typeAPI, typeName, objName, teaserText string) (typeID, objID, teaser int64) {
	t.Helper()
	teaser = createObjects(t, base, branch, `{"meta":{"typeRef":10,"apiIdentifier":"`+prefix+`Teaser"},"values":[`+value(1000, 201, "Teaser")+","+
		value(1001, 0, "String")+","+value(1004, 0, false)+","+value(1017, 0, true)+"]}")[0]
	form := createObjects(t, base, branch, `{"meta":{"typeRef":50},"values":[`+value(1000, 201, typeName+" form")+","+
		fmt.Sprintf(`{"attribute":5053,"language":0,"variant":0,"value":%d,"sortReverse":0}`, teaser)+"]}")[0]
	typeID = createObjects(t, base, branch, `{"meta":{"typeRef":0,"apiIdentifier":"`+typeAPI+`"},"values":[`+
		value(1000, 201, typeName)+","+value(5001, 0, form)+"]}")[0]
	objID = createObjects(t, base, branch, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s,%s]}`, typeID,
		value(1000, 201, objName), value(teaser, 201, teaserText)))[0]
	return typeID, objID, teaser
}

// createStudioUser creates a user who may write branch and returns the
// transaction.
func createStudioUser(t *testing.T, base, name, display, password string, branch int64) int64 {
	t.Helper()
	vals := []string{value(1100, 0, name), value(1000, 201, display), value(1101, 0, password), value(1105, 0, branch)}
	return write(t, http.MethodPost, base, `{"meta":{"typeRef":110},"values":[`+strings.Join(vals, ",")+`]}`)
}

// saveAs writes objects through Management with the page's studio session
// (its bearer token) and returns when, by the page's clock (ms), it started.
func saveAs(p *studioPage, branch int64, body, method string) float64 {
	p.t.Helper()
	js := fmt.Sprintf(`(async () => { const s = JSON.parse(sessionStorage.getItem("cms.studio.session")); const at = Date.now();
		const r = await fetch("/apis/cms/v1/branches/%d/objects", {method: %q, headers: {"Authorization": "Bearer " + s.token,
		"Content-Type": "application/json", "Accept": "application/json"}, body: %q});
		if (!r.ok) throw new Error("save: " + r.status + " " + await r.text()); return at; })()`, branch, method, body)
	return studioEval[float64](p, js)
}

// clickCSS clicks the visible element the CSS selector finds.
func clickCSS(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)
}

// evalJS runs JavaScript in the page as a step.
func evalJS(js string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](js) }
