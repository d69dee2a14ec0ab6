package testenv

import (
	"os"
	"strings"
	"testing"
)

// Section returns the text of doc between the lines begin and end (each
// including its newline); it fails t when doc lacks them.
func Section(t testing.TB, doc, begin, end string) string {
	t.Helper()
	b, e := strings.Index(doc, begin), strings.Index(doc, end)
	if b < 0 || e < b {
		t.Fatalf("the document lacks the section between %q and %q", begin, end)
	}
	return doc[b+len(begin) : e]
}

// Generated checks that the file path holds want between the lines begin
// and end: a generated part of a hand-written document (README tables,
// docs/architecture.md). With update it rewrites the part instead of
// failing; regenerate names the command that does so.
func Generated(t testing.TB, path, begin, end, want string, update bool, regenerate string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if Section(t, doc, begin, end) == want {
		return
	}
	if update {
		head, _, _ := strings.Cut(doc, begin)
		_, tail, _ := strings.Cut(doc, end)
		if err := os.WriteFile(path, []byte(head+begin+want+end+tail), info.Mode().Perm()); err != nil { //nolint:gosec // path is a document of the repository named by the calling test
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the generated part between %q and %q is out of date; run %s. Want:\n%s", path, begin, end, regenerate, want)
}
