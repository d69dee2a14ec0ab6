package main

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func init() {
	addStudioJourney("keyboard", studioKeyboardJourney)
}

// studioKeyboardJourney: signing in, the sections, the keyboard help and
// the language work with the keyboard alone (keys go to whatever has the
// focus, as a person's would); the studio speaks German when asked, and
// every view passes axe-core in both languages.
func studioKeyboardJourney(t *testing.T, s *studioSetup) {
	p := s.page(t, "editor")
	p.open("/studio/")
	p.waitFor("the user name field has the focus", `document.activeElement && document.activeElement.id === "login-user"`)
	p.step("sign in with the keyboard", studioWait,
		chromedp.KeyEvent("admin"), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(crashPassword), chromedp.KeyEvent(kb.Enter))
	p.waitFor("signed in", `!!document.querySelector(".topbar")`)

	// The first Tab reaches the skip link, which moves the focus to the work area.
	p.step("tab to the skip link", studioWait, chromedp.KeyEvent(kb.Tab))
	p.waitFor("the skip link has the focus", `document.activeElement && document.activeElement.classList.contains("skip-link")`)
	p.shot("skip-link")
	p.step("follow the skip link", studioWait, chromedp.KeyEvent(kb.Enter))
	p.waitFor("the work area has the focus", `location.hash === "#work"`)

	p.step("open the help", studioWait, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent("?"))
	p.waitFor("the help lists the shortcuts", `!!document.querySelector("dialog[open]") && document.querySelector("dialog[open]").innerText.includes("Go to the model")`)
	p.shot("help")
	p.checkAccessibility("the keyboard help")
	p.step("close the help", studioWait, chromedp.KeyEvent(kb.Escape))
	p.waitFor("the help is closed", `!document.querySelector("dialog[open]")`)

	p.step("g m", studioWait, chromedp.KeyEvent("g"), chromedp.KeyEvent("m"))
	p.waitFor("the model", `/\/model$/.test(location.pathname)`)
	p.step("g c", studioWait, chromedp.KeyEvent("g"), chromedp.KeyEvent("c"))
	p.waitFor("the content", `/\/content$/.test(location.pathname)`)

	// The language select, reached with the keyboard: German.
	p.step("focus the language", studioWait, chromedp.Focus(chromedp.CSS(`select[aria-label="Language"]`)))
	p.step("choose German", studioWait, chromedp.KeyEvent(kb.ArrowDown))
	p.waitFor("the studio speaks German", `document.documentElement.lang === "de" && document.body.innerText.includes("Abmelden") && document.body.innerText.includes("Inhalte")`)
	p.shot("german")
	p.checkAccessibility("the shell in German")
	p.step("reload", studioWait, chromedp.Reload())
	p.waitFor("German after a reload", `document.documentElement.lang === "de" && document.body.innerText.includes("Abmelden")`)
	p.step("back to English", studioWait, chromedp.Focus(chromedp.CSS(`select[aria-label="Sprache"]`)), chromedp.KeyEvent(kb.ArrowUp))
	p.waitFor("English again", `document.documentElement.lang === "en" && document.body.innerText.includes("Sign out")`)
}
