package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/cmsplatform/cms/pkg/webhooks"
)

func init() {
	addStudioJourney("webhooks", studioWebhooksJourney)
}

// hookReceiver is a webhook receiver on loopback (the studio's process
// runs with CMS_WEBHOOK_ALLOW_PRIVATE): it verifies each delivery's
// signature with the secret the studio showed, records the test
// deliveries, and answers 503 on /down.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret []byte
	tests  []webhooks.Payload
	bad    int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/down" {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		defer r.mu.Unlock()
		var p webhooks.Payload
		if len(r.secret) == 0 || webhooks.Verify(r.secret, req.Header.Get(webhooks.SignatureHeader), body, time.Now(), 5*time.Minute) != nil ||
			json.Unmarshal(body, &p) != nil || p.ID != req.Header.Get("X-Cms-Delivery") {
			r.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if p.Event.Kind == webhooks.KindTest {
			r.tests = append(r.tests, p)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = []byte(s)
}

func (r *hookReceiver) testDeliveries() ([]webhooks.Payload, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]webhooks.Payload(nil), r.tests...), r.bad
}

// studioWebhooksJourney: the administrator creates a webhook pointing at a
// receiver of the test, sees its secret once (not after a reload), sends a
// test delivery, which the receiver gets signed with that secret, and the
// delivery log shows the attempt with its status and duration; a webhook
// whose receiver answers 503 shows the error; the Code screen downloads the
// branch's C# and TypeScript models as files naming the model's classes; a
// user who is no administrator is offered no Webhooks. Finally the
// administrator deletes the webhook.
func studioWebhooksJourney(t *testing.T, s *studioSetup) {
	branch := createBranch(t, s.base, "Hook work")
	setupTeaserModel(t, s.base, branch, "hk", "hookArticle", "Hook article", "First hook article", "Hook teaser")
	tx := createStudioUser(t, s.base, "hookeditor", "Hanna Roth", "hookeditor-password-1", branch)
	waitDelivered(t, s, branch, tx)
	rcv := newHookReceiver(t)
	hooks := fmt.Sprintf("/studio/b/%d/webhooks", branch)

	admin := s.page(t, "admin")
	admin.login()
	admin.open(hooks)
	admin.waitFor("the Webhooks section is offered", `[...document.querySelectorAll(".sections button")].some(b => b.textContent === "Webhooks")`)
	admin.waitFor("the list loaded", `!!document.querySelector(".webhook-nav")`)
	admin.shot("webhooks")

	// Create: name, URL, filters.
	admin.click("New webhook")
	admin.fill("Name", "Shop sync")
	admin.fill("Receiver URL", rcv.srv.URL+"/in")
	admin.step("filter on the branch and two kinds", studioWait, chromedp.Click(labelled("Hook work"), chromedp.NodeVisible),
		chromedp.Click(labelled("created"), chromedp.NodeVisible), chromedp.Click(labelled("updated"), chromedp.NodeVisible))
	admin.shot("new-webhook")
	admin.checkAccessibility("the webhook dialog")
	admin.click("Create webhook")

	// The secret, once.
	admin.waitFor("the secret is shown", `/^[0-9a-f]{64}$/.test(document.getElementById("webhook-secret")?.value ?? "")`)
	secret := studioEval[string](admin, `document.getElementById("webhook-secret").value`)
	rcv.setSecret(secret)
	admin.waitFor("the secret has the focus", `document.activeElement?.id === "webhook-secret"`)
	admin.shot("secret-once")
	admin.checkAccessibility("the new webhook with its secret")
	admin.waitText("Shop sync")
	hookPath := studioEval[string](admin, `location.pathname`)
	if !regexp.MustCompile(`/webhooks/\d+$`).MatchString(hookPath) {
		t.Fatalf("after creating, the studio shows %s, want the new webhook", hookPath)
	}
	admin.waitFor("its filters are shown", `(() => { const t = document.querySelector(".props").innerText; return t.includes("Hook work") && t.includes("created, updated"); })()`)
	admin.click("I have saved the secret")
	admin.waitFor("the secret is gone", `!document.getElementById("webhook-secret")`)
	admin.open(hookPath)
	admin.waitText("Shop sync")
	if studioEval[bool](admin, fmt.Sprintf(`document.documentElement.outerHTML.includes(%q)`, secret)) {
		t.Error("the secret shows again after a reload")
	}

	// A test delivery reaches the receiver, signed; the log shows it.
	admin.click("Send test delivery")
	admin.waitFor("the test was accepted", `document.querySelector(".test-result")?.innerText.startsWith("Test delivery: accepted, status 200")`)
	admin.waitFor("the log shows the attempt", `!!document.querySelector("tr.attempt-accepted[data-delivery^='test-']")`)
	row := studioEval[[]string](admin, `[...document.querySelector("tr.attempt-accepted[data-delivery^='test-']").cells].map(c => c.innerText).concat(document.querySelector("tr.attempt-accepted[data-delivery^='test-']").dataset.delivery)`)
	if len(row) != 8 || row[1] != "test" || row[2] != "1" || row[3] != "200" || !regexp.MustCompile(`^\d+([.,]\d)? (ms|s)$`).MatchString(row[4]) ||
		row[5] != "accepted" || row[6] != "" {
		t.Errorf("the log's row of the test delivery: %q", row)
	}
	got, bad := rcv.testDeliveries()
	if len(got) != 1 || row[len(row)-1] != got[0].ID || bad != 0 {
		t.Errorf("the receiver got test deliveries %+v (%d with a bad signature), want the one the log shows, %s", got, bad, row[len(row)-1])
	}
	t.Logf("webhooks: %s setup: the test delivery %s took %s", s.name, row[len(row)-1], row[4])
	admin.shot("test-delivered")
	admin.checkAccessibility("the webhook with its delivery log")

	// A receiver that fails: the log says why.
	admin.click("New webhook")
	admin.fill("Name", "Broken receiver")
	admin.fill("Receiver URL", rcv.srv.URL+"/down")
	admin.step("disable it", studioWait, chromedp.Click(labelled("Enabled: deliver changes"), chromedp.NodeVisible))
	admin.click("Create webhook")
	admin.waitFor("its secret is shown", `!!document.getElementById("webhook-secret")`)
	admin.click("I have saved the secret")
	admin.click("Send test delivery")
	admin.waitFor("the failure is said", `document.querySelector(".test-result")?.innerText.includes("503")`)
	admin.waitFor("the log shows the error", `document.querySelector("tr.attempt-failed .attempt-error")?.innerText.includes("receiver answered 503")`)
	admin.waitFor("and the status", `document.querySelector("tr.attempt-failed .attempt-status")?.innerText === "503"`)
	admin.shot("failing-target")

	// Code: the models as files.
	dir := t.TempDir()
	admin.click("Code")
	admin.waitText("Download C# models")
	admin.step("allow downloads", studioWait, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, BrowserContextID: chromedp.FromContext(admin.ctx).BrowserContextID, DownloadPath: dir})
		return err
	}))
	for _, f := range []struct{ button, file, want string }{
		{"Download C# models", "models-Hook-work.cs", "class HookArticle"},
		{"Download TypeScript models", "models-Hook-work.ts", "HookArticle"},
	} {
		admin.click(f.button)
		admin.waitText("Saved " + f.file)
		var body []byte
		deadline := time.Now().Add(studioWait)
		for {
			b, err := os.ReadFile(filepath.Join(dir, f.file))
			if err == nil && len(b) > 0 {
				body = b
				break
			}
			if time.Now().After(deadline) {
				entries, _ := os.ReadDir(dir)
				t.Fatalf("no download %s in %s (%v): %v", f.file, dir, entries, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(string(body), f.want) || !strings.Contains(strings.ToLower(string(body)), "hkteaser") {
			t.Errorf("%s (%d bytes) names no %q or no hkTeaser:\n%.600s", f.file, len(body), f.want, body)
		}
	}
	admin.shot("code")
	admin.checkAccessibility("the code screen")

	// Someone who is no administrator is offered no Webhooks.
	other := s.page(t, "editor")
	other.signInAs("hookeditor", "hookeditor-password-1")
	other.open(hooks)
	other.waitText("Only administrators manage webhooks.")
	if studioEval[bool](other, `[...document.querySelectorAll(".sections button")].some(b => b.textContent === "Webhooks")`) {
		t.Error("a user who is no administrator is offered Webhooks")
	}
	other.waitFor("Code is offered", `[...document.querySelectorAll(".sections button")].some(b => b.textContent === "Code")`)
	other.shot("not-an-administrator")

	// Delete the webhook: it stops receiving and leaves the list.
	admin.open(hookPath)
	admin.waitText("Shop sync")
	admin.click("Delete")
	admin.click("Delete webhook")
	admin.waitFor("it left the list", `![...document.querySelectorAll(".webhook-nav a")].some(a => a.textContent.includes("Shop sync"))`)
	admin.shot("deleted")
}
