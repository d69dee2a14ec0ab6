// Package scripts holds the helper scripts of the Makefile and CI; its
// tests check the ones whose output people read.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVetProgress: the filter of `make test` turns `go vet -v` into one
// progress line per package of this module, drops the names of other
// packages and keeps every finding.
func TestVetProgress(t *testing.T) {
	in := strings.Join([]string{
		"internal/goarch",
		"github.com/spf13/cobra",
		"github.com/cmsplatform/cms/pkg/params",
		"# github.com/cmsplatform/cms/pkg/params",
		"pkg/params/params.go:12:3: fmt.Printf format %d has arg x of wrong type string",
		"github.com/cmsplatform/cms/pkg/params_test",
	}, "\n") + "\n"
	cmd := exec.Command("awk", "-f", "vet-progress.awk")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"vet: github.com/cmsplatform/cms/pkg/params",
		"# github.com/cmsplatform/cms/pkg/params",
		"pkg/params/params.go:12:3: fmt.Printf format %d has arg x of wrong type string",
		"vet: github.com/cmsplatform/cms/pkg/params_test",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestWorkflowRunsTheCIScript: the GitHub workflow runs .ci/run itself (so it
// cannot drift from what CI runs, as it once did by leaving out the lint),
// and .ci/run runs every make target CI promises, lint included.
func TestWorkflowRunsTheCIScript(t *testing.T) {
	workflow := readFile(t, "../.github/workflows/ci.yml")
	var runs []string
	for _, line := range strings.Split(workflow, "\n") {
		if cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "run: "); ok {
			runs = append(runs, cmd)
		}
	}
	found := false
	for _, cmd := range runs {
		if cmd == "bash .ci/run" {
			found = true
		}
		for _, own := range []string{"make test", "make lint", "make proto", "ci-services.sh", "go test", "go tool"} {
			if strings.Contains(cmd, own) {
				t.Errorf("workflow step %q runs %q itself instead of leaving it to .ci/run", cmd, own)
			}
		}
	}
	if !found {
		t.Errorf("no workflow step runs `bash .ci/run`; steps: %q", runs)
	}
	script := readFile(t, "../.ci/run")
	for _, target := range []string{"make proto-check", "make lint", "make test", "scripts/ci-services.sh"} {
		if !strings.Contains(script, target) {
			t.Errorf(".ci/run does not run %s", target)
		}
	}
}

// TestLintTimeoutFitsAColdRun: golangci-lint's own timeout, which ended a cold
// CI run after 10 minutes with no test run, leaves room for a cold analysis
// on 2 cores (measured at about 16 minutes) and stays inside CI's 90.
func TestLintTimeoutFitsAColdRun(t *testing.T) {
	cfg := readFile(t, "../.golangci.yml")
	var timeout time.Duration
	for _, line := range strings.Split(cfg, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "timeout: "); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("timeout %q: %v", v, err)
			}
			timeout = d
		}
	}
	if timeout < 30*time.Minute || timeout > 60*time.Minute {
		t.Errorf("lint timeout %v: want 30 to 60 minutes (a cold run takes about 16)", timeout)
	}
	if !strings.Contains(readFile(t, "../.ci/run"), "GOLANGCI_LINT_CACHE") {
		t.Error(".ci/run does not keep golangci-lint's cache in the component cache")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTimedTestsExist: every test the Makefile runs alone after the others
// (TIMED_TESTS, in TIMED_PACKAGES) is still defined there, and the first
// run skips exactly those: a renamed test would otherwise run in neither.
func TestTimedTestsExist(t *testing.T) {
	vars := map[string]string{}
	for _, line := range strings.Split(readFile(t, "../Makefile"), "\n") {
		if name, val, ok := strings.Cut(line, ":="); ok && strings.HasPrefix(name, "TIMED_") {
			vars[strings.TrimSpace(name)] = strings.TrimSpace(val)
		}
	}
	names, ok := strings.CutPrefix(vars["TIMED_TESTS"], "^(")
	names, ok2 := strings.CutSuffix(names, ")$$")
	if !ok || !ok2 || names == "" {
		t.Fatalf("TIMED_TESTS = %q, want ^(TestA|TestB)$$", vars["TIMED_TESTS"])
	}
	var sources strings.Builder
	for _, pkg := range strings.Fields(vars["TIMED_PACKAGES"]) {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("TIMED_PACKAGES names %s, which has no tests (%v)", pkg, err)
		}
		for _, f := range files {
			sources.WriteString(readFile(t, f))
		}
	}
	for _, name := range strings.Split(names, "|") {
		if !strings.Contains(sources.String(), "func "+name+"(t *testing.T)") {
			t.Errorf("TIMED_TESTS names %s, which no package of TIMED_PACKAGES (%s) defines", name, vars["TIMED_PACKAGES"])
		}
	}
	for _, use := range []string{"-skip '$(TIMED_TESTS)' ./...", "-p 1 -run '$(TIMED_TESTS)' $(TIMED_PACKAGES)"} {
		if !strings.Contains(readFile(t, "../Makefile"), use) {
			t.Errorf("the test target does not run go test %s", use)
		}
	}
}

// TestCIServicesStartsEveryComponent: ci-services.sh starts every service
// script (all at once), and its env file names the addresses the tests
// read for the components that serve one, Jaeger's OTLP receiver and query
// service among them.
func TestCIServicesStartsEveryComponent(t *testing.T) {
	script := readFile(t, "ci-services.sh")
	var list []string
	for _, line := range strings.Split(script, "\n") {
		if v, ok := strings.CutPrefix(line, "SERVICES=("); ok {
			list = strings.Fields(strings.TrimSuffix(v, ")"))
		}
	}
	files, err := filepath.Glob("services/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sh")
		if name == "lib" || name == "stop" {
			continue
		}
		found := false
		for _, s := range list {
			found = found || s == name
		}
		if !found {
			t.Errorf("ci-services.sh does not start %s (SERVICES=%v)", f, list)
		}
	}
	for _, env := range []string{"CMS_POSTGRES_URL", "CMS_NATS_URL", "CMS_ELASTICSEARCH_URL", "CMS_REDIS_URL",
		"CMS_OTLP_URL", "CMS_JAEGER_QUERY_URL"} {
		if !strings.Contains(script, "export "+env+"=") {
			t.Errorf("the env file ci-services.sh writes lacks %s", env)
		}
	}
	if !strings.Contains(script, `run_service "${name}" &`) {
		t.Error("ci-services.sh no longer starts the components in parallel")
	}
}
