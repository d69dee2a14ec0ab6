package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	testName   = regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`)
	mdLink     = regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)
	repoRoots  = []string{"pkg/", "services/", "docs/", "scripts/", "proto/", "deploy/", "examples/", ".ci/", ".github/"}
)

// TestContributingNamesWhatExists: the checklists of contributing.md stay
// true to the tree: every path they quote exists, every test they name is
// a test function of the repository, every link resolves, and the README
// links the page.
func TestContributingNamesWhatExists(t *testing.T) {
	b, err := os.ReadFile("contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	paths := 0
	for _, m := range backticked.FindAllStringSubmatch(doc, -1) {
		p := m[1]
		if strings.ContainsAny(p, " <>…*(){}=") || !hasRepoRoot(p) {
			continue // a command, a placeholder or no path
		}
		paths++
		if _, err := os.Stat(filepath.Join("..", strings.TrimSuffix(p, "/"))); err != nil {
			t.Errorf("contributing.md quotes %s, which does not exist", p)
		}
	}
	if paths < 20 {
		t.Fatalf("only %d paths found in contributing.md: the check found nothing to check", paths)
	}
	tests := testFunctions(t)
	for _, name := range testName.FindAllString(doc, -1) {
		if !tests[name] {
			t.Errorf("contributing.md names %s, which is no test function of the repository", name)
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("contributing.md links %s, which does not exist", m[1])
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/contributing.md)") {
		t.Error("README.md does not link docs/contributing.md")
	}
}

func hasRepoRoot(p string) bool {
	for _, r := range repoRoots {
		if strings.HasPrefix(p, r) {
			return true
		}
	}
	return false
}

// testFunctions are the names of the Test functions of the repository's
// test files.
func testFunctions(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "data", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path) //nolint:gosec // a test file of the repository
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
