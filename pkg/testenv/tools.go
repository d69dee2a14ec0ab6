package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tools the tests run, named by the environment variables
// scripts/ci-services.sh writes into its env file: the compilers of the
// code generator tests (scripts/services/compilers.sh installs them) and
// the browser of the browser test (scripts/services/browser.sh), and
// promtool (scripts/services/promtool.sh).
const (
	// MCS is the C# compiler (Debian package mono-mcs).
	MCS = "CMS_MCS"
	// TSC is TypeScript's tsc, from the npm package pinned by
	// scripts/services/compilers/package-lock.json.
	TSC = "CMS_TSC"
	// Chromium is the browser (Debian package chromium).
	Chromium = "CMS_CHROMIUM"
	// Promtool is Prometheus's rule checker, built from its Go module by
	// scripts/services/promtool.sh.
	Promtool = "CMS_PROMTOOL"
)

// toolInstall says what a tool is for and which script installs it.
var toolInstall = map[string]string{
	MCS:      "this test compiles generated code. Install it with `sudo bash scripts/services/compilers.sh`",
	TSC:      "this test compiles generated code. Install it with `sudo bash scripts/services/compilers.sh`",
	Chromium: "this test drives a browser. Install it with `sudo bash scripts/services/browser.sh`",
	Promtool: "this test checks the shipped alert rules. Build it with `sudo bash scripts/services/promtool.sh`",
}

// toolDefaults are where a tool is looked for when its variable is unset:
// the install location of its script, then PATH.
var toolDefaults = map[string][]string{
	MCS:      {"mcs"},
	TSC:      {filepath.Join(cacheDir(), "typescript", "node_modules", ".bin", "tsc"), "tsc"},
	Chromium: {"/usr/bin/chromium", "chromium"},
	Promtool: {filepath.Join(cacheDir(), "bin", "promtool"), "promtool"},
}

func cacheDir() string {
	if d := os.Getenv("CMS_CI_CACHE"); d != "" {
		return d
	}
	return "/var/cache/cms-ci"
}

// Tool returns the path of the tool the environment variable name (MCS,
// TSC, Chromium, Promtool) names, else of its default install location or PATH
// entry. When none exists the test is skipped, or fails when the CI
// environment variable is set: a CI run never passes with these tests
// skipped.
func Tool(t testing.TB, name string) string {
	t.Helper()
	candidates := toolDefaults[name]
	if v := os.Getenv(name); v != "" {
		candidates = []string{v}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := name + ": not found (tried " + joinQuoted(candidates) + "): " + toolInstall[name] +
		" (or `sudo ./scripts/ci-services.sh`)"
	if InCI() {
		t.Fatalf("%s (CI=%q: these tests must run in CI, not skip)", msg, os.Getenv("CI"))
	}
	t.Skip(msg)
	return ""
}

func joinQuoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += "\"" + s + "\""
	}
	return out
}
