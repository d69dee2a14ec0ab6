package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/app"
)

// The studio's browser tests drive the studio served by `cms run` in a real
// headless Chromium (Debian's package, CMS_CHROMIUM), on both setups: the
// embedded components and the distributed ones (PostgreSQL, NATS,
// Elasticsearch, Redis). TestStudio starts one process and one browser per
// setup and runs every journey of studioJourneys against it, each in a
// fresh browser context (its own storage, like another person's browser).
// Every journey saves screenshots (studioPage.shot) under the directory
// CMS_SCREENSHOT_DIR (default: <temp>/cms-studio-screenshots), printed in
// the log, so a reader of the test output can look at them.

// studioJourney is one thing an editor does, end to end.
type studioJourney struct {
	name string
	run  func(t *testing.T, s *studioSetup)
}

// studioJourneys are registered by the studio_*_test.go files (init).
var studioJourneys []studioJourney

func addStudioJourney(name string, run func(t *testing.T, s *studioSetup)) {
	studioJourneys = append(studioJourneys, studioJourney{name, run})
}

// studioSetup is one running process and its browser.
type studioSetup struct {
	name     string
	base     string
	proc     *cmsProc
	browser  context.Context
	shotsDir string
}

const (
	// studioWait bounds each wait for the page: what a person would wait for.
	studioWait = 10 * time.Second
	// studioViewport is the window the screenshots show.
	studioViewportW, studioViewportH = 1280, 800
)

func TestStudio(t *testing.T) {
	chromium := testenv.Tool(t, testenv.Chromium)
	axe := axeSource(t)
	slices.SortStableFunc(studioJourneys, func(a, b studioJourney) int { return strings.Compare(a.name, b.name) })
	setups := []struct {
		name string
		env  func(t *testing.T) []string
	}{
		// The webhooks journey's receiver is on loopback, which webhook
		// deliveries (and test deliveries) refuse by default.
		{"embedded", func(*testing.T) []string { return []string{"CMS_WEBHOOK_ALLOW_PRIVATE=true"} }},
		{"distributed", func(t *testing.T) []string {
			// Bearer tokens need a shared key on PostgreSQL.
			return append(distributedEnv(t), "CMS_AUTH_TOKEN_KEY=studio-test-key-0123456789abcdef0123456789", "CMS_WEBHOOK_ALLOW_PRIVATE=true")
		}},
	}
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			bin, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			p := startCMS(t, bin, t.TempDir(), su.env(t)...)
			s := &studioSetup{name: su.name, base: p.base, proc: p, browser: studioBrowser(t, chromium),
				shotsDir: screenshotDir(t, su.name)}
			studioAxe = axe
			t.Logf("screenshots of the %s setup: %s", su.name, s.shotsDir)
			for _, j := range studioJourneys {
				t.Run(j.name, func(t *testing.T) { j.run(t, s) })
			}
		})
	}
}

// studioAxe is axe-core's source (the studio's locked dev dependency).
var studioAxe string

// axeSource reads axe-core from studio/node_modules (`make studio-deps`).
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "studio", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is not installed (run make studio-deps): %v", err)
		}
		t.Skipf("axe-core is not installed (run make studio-deps): %v", err)
	}
	return string(b)
}

func screenshotDir(t *testing.T, setup string) string {
	t.Helper()
	root := os.Getenv("CMS_SCREENSHOT_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "cms-studio-screenshots")
	}
	dir := filepath.Join(root, setup)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// studioBrowser starts Chromium for one setup; pages open browser contexts
// in it. No sandbox: Chromium refuses its sandbox as root, and without root
// it needs unprivileged user namespaces, which containers and Ubuntu's
// AppArmor defaults may not give. The browser loads only the test's pages;
// no background networking (this machine's network is closed).
func studioBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.Flag("disable-gpu", true),
		chromedp.NoSandbox, chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(studioViewportW, studioViewportH))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser, under no deadline (a deadline
	// on it would bound the whole browser's life): bounded from outside.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start %s: %v", chromium, err)
		}
	case <-time.After(browserStartWait):
		cancel()
		t.Fatalf("start %s: no tab after %v", chromium, browserStartWait)
	}
	return ctx
}

// studioPage is one tab in a browser context of its own.
type studioPage struct {
	t     *testing.T
	s     *studioSetup
	ctx   context.Context
	name  string
	shots int
}

// page opens a tab in a fresh browser context (its own cookies and storage);
// who names it in screenshots ("editor", "other").
func (s *studioSetup) page(t *testing.T, who string) *studioPage {
	t.Helper()
	ctx, cancel := chromedp.NewContext(s.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &studioPage{t: t, s: s, ctx: ctx, name: who}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(studioViewportW, studioViewportH)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return p
}

// step runs actions within d, failing with what the page shows.
func (p *studioPage) step(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.shot("failed-" + what)
		p.t.Fatalf("%s (%s): %v\npage: %s", what, p.name, err, p.text())
	}
}

// eval evaluates JavaScript in the page and decodes the result.
func studioEval[T any](p *studioPage, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, studioWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// open navigates to a studio path ("/studio/…").
func (p *studioPage) open(path string) {
	p.t.Helper()
	p.step("open "+path, studioWait, chromedp.Navigate(p.s.base+path))
}

// waitFor waits until the JavaScript condition holds. It polls on an
// interval, not on DOM mutations: chromedp's mutation polling does not
// observe characterData, so a text node updated in place (Preact changes
// "Counting…" to "10 objects" that way) would never be seen.
func (p *studioPage) waitFor(what, cond string) {
	p.t.Helper()
	p.step(what, studioWait, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for {
			_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))(ctx, tg)
			// A document that was just loaded may replace its JavaScript
			// context under the poll: poll again in the new one.
			if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
}

// waitText waits until the page's visible text contains text.
func (p *studioPage) waitText(text string) {
	p.t.Helper()
	b, _ := json.Marshal(text)
	p.waitFor("show "+text, fmt.Sprintf(`document.body.innerText.includes(%s)`, b))
}

// button is the visible button with this text or accessible name.
func button(name string) chromedp.JSPath {
	q, _ := json.Marshal(name)
	return chromedp.JSPath(fmt.Sprintf(`[...document.querySelectorAll("button, [role=button], a")].find(b => b.offsetParent !== null && `+
		`(b.textContent.trim() === %s || b.getAttribute("aria-label") === %s))`, q, q))
}

// labelled is the control a <label> with this text names, or the one with
// this aria-label.
func labelled(label string) chromedp.JSPath {
	q, _ := json.Marshal(label)
	return chromedp.JSPath(fmt.Sprintf(`(() => { const l = [...document.querySelectorAll("label")].find(l => l.textContent.trim() === %s); `+
		`return (l && (l.htmlFor ? document.getElementById(l.htmlFor) : l.querySelector("input, select, textarea"))) || document.querySelector("[aria-label=" + JSON.stringify(%s) + "]"); })()`, q, q))
}

// fill types text into a control found by its label (replacing its value).
func (p *studioPage) fill(label, text string) {
	p.t.Helper()
	sel := labelled(label)
	empty := fmt.Sprintf(`(() => { const el = %s; el.value = ""; el.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel)
	p.step("fill "+label, studioWait, chromedp.WaitVisible(sel), chromedp.Evaluate[chromedp.Void](empty), chromedp.SendKeys(sel, text))
}

// click clicks a button by its name.
func (p *studioPage) click(name string) {
	p.t.Helper()
	p.step("click "+name, studioWait, chromedp.Click(button(name), chromedp.NodeVisible))
}

// login opens the studio and signs in as the administrator.
func (p *studioPage) login() {
	p.t.Helper()
	p.open("/studio/")
	p.signIn()
}

// signIn fills the login form as the administrator.
func (p *studioPage) signIn() {
	p.t.Helper()
	p.fillSignIn("admin", crashPassword)
}

// signInAs opens the studio and signs in as user.
func (p *studioPage) signInAs(user, password string) {
	p.t.Helper()
	p.open("/studio/")
	p.fillSignIn(user, password)
}

// fillSignIn fills the open login form as user and waits for the studio.
func (p *studioPage) fillSignIn(user, password string) {
	p.t.Helper()
	p.fill("User name", user)
	p.fill("Password", password)
	p.click("Sign in")
	p.waitFor("signed in as "+user, `!!document.querySelector(".topbar")`)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// shot saves a screenshot of the viewport as <journey>/<nn>-<what>.png.
func (p *studioPage) shot(what string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, studioWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Errorf("screenshot %s: %v", what, err)
		return ""
	}
	p.shots++
	journey := p.t.Name()
	if i := strings.LastIndexByte(journey, '/'); i >= 0 {
		journey = journey[i+1:]
	}
	dir := filepath.Join(p.s.shotsDir, unsafeName.ReplaceAllString(journey, "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	f := filepath.Join(dir, fmt.Sprintf("%02d-%s-%s.png", p.shots, p.name, unsafeName.ReplaceAllString(what, "-")))
	if err := os.WriteFile(f, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", f)
	return f
}

// text is the page's visible text, shortened, for failure messages.
func (p *studioPage) text() string {
	ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

// axeViolation is one finding of axe-core.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// checkAccessibility runs axe-core on the page as it is and fails on
// every serious or critical violation.
func (p *studioPage) checkAccessibility(what string) {
	p.t.Helper()
	if studioEval[bool](p, `typeof window.axe === "undefined"`) {
		if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[chromedp.Void](studioAxe)); err != nil {
			p.t.Fatalf("load axe-core: %v", err)
		}
	}
	raw := studioEval[string](p, `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		p.t.Fatalf("axe-core answer: %v", err)
	}
	var bad []string
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			var where []string
			for _, n := range v.Nodes {
				where = append(where, fmt.Sprint(n.Target...))
			}
			bad = append(bad, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(where, ", ")))
		}
	}
	if len(bad) > 0 {
		p.shot("axe-" + what)
		p.t.Errorf("accessibility of %s: %d serious or critical violations:\n%s", what, len(bad), strings.Join(bad, "\n"))
	} else {
		p.t.Logf("accessibility of %s: no serious or critical violation (%d minor)", what, len(vs))
	}
}

// studioEngines are the engines the process of a setup must report.
func studioEngines(setup string) []string {
	if setup == "distributed" {
		return []string{app.EnginePostgres, app.EngineNATS, app.EngineElasticsearch, app.EngineRedis, app.EngineNATSObjects}
	}
	return []string{app.EngineSQLite, app.EngineEmbeddedNATS, app.EngineBleve, app.EngineMemory, app.EngineFS}
}
