package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Compilers the code generator tests run, named by the environment
// variables scripts/ci-services.sh writes into its env file
// (scripts/services/compilers.sh installs them).
const (
	// MCS is the C# compiler (Debian package mono-mcs).
	MCS = "CMS_MCS"
	// TSC is TypeScript's tsc, from the npm package pinned by
	// scripts/services/compilers/package-lock.json.
	TSC = "CMS_TSC"
)

// toolDefaults are where a tool is looked for when its variable is unset:
// the install location of compilers.sh, then PATH.
var toolDefaults = map[string][]string{
	MCS: {"mcs"},
	TSC: {filepath.Join(cacheDir(), "typescript", "node_modules", ".bin", "tsc"), "tsc"},
}

func cacheDir() string {
	if d := os.Getenv("CMS_CI_CACHE"); d != "" {
		return d
	}
	return "/var/cache/cms-ci"
}

// Tool returns the path of the tool the environment variable name (MCS,
// TSC) names, else of its default install location or PATH entry. When
// none exists the test is skipped, or fails when the CI environment
// variable is set: a CI run never passes with the compile tests skipped.
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
	msg := name + ": no compiler found (tried " + joinQuoted(candidates) + "): this test compiles generated code. " +
		"Install it with `sudo bash scripts/services/compilers.sh` (or `sudo ./scripts/ci-services.sh`)"
	if InCI() {
		t.Fatalf("%s (CI=%q: compile tests must run in CI, not skip)", msg, os.Getenv("CI"))
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
