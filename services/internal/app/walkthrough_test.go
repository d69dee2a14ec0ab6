package app

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeWalkthrough returns the README's "Try it" script: the first bash
// block after that heading.
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## Try it")
	if !ok {
		t.Fatal(`README has no "## Try it" section`)
	}
	m := regexp.MustCompile("(?s)\n```(\\w*)\n(.*?)\n```\n").FindStringSubmatch(after)
	if m == nil {
		t.Fatal(`no fenced block in the README's "Try it" section`)
	}
	if m[1] != "bash" {
		t.Fatalf("the walkthrough is fenced as %q; it needs bash (arrays, process substitution)", m[1])
	}
	return m[2]
}

// TestREADMEWalkthrough runs the README's walkthrough with bash against a
// fresh `cms run` (the documented admin password, the server's address
// instead of localhost:8080) and checks what it prints, the last step
// being the Delivery read that must show the article right away.
func TestREADMEWalkthrough(t *testing.T) {
	script := readmeWalkthrough(t)
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: the walkthrough needs it", tool)
			}
			t.Skipf("%s is not installed: the walkthrough needs it", tool)
		}
	}
	base, _ := edgeServer(t, func(c *Config) { c.AdminPassword = DefaultAdminPassword })
	script = strings.ReplaceAll(script, "http://localhost:8080", base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script).CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"HTTP/1.1 200 OK", "\n404\n", "\n401\n", `"createdObjectIds"`} {
		if !strings.Contains(text, want) {
			t.Errorf("walkthrough output lacks %q:\n%s", want, text)
		}
	}
	_, delivery, ok := strings.Cut(text, `"skip": 0`)
	if !ok || !strings.Contains(delivery, `"title": "Hallo"`) || !strings.Contains(delivery, `"count": 1`) {
		t.Errorf("the last step (Delivery) does not show the German article:\n%s", text)
	}
}
