package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestProblemTextIsBounded: a detail or instance quoting a huge input is
// cut to maxProblemText bytes at a rune boundary; short ones stay whole.
func TestProblemTextIsBounded(t *testing.T) {
	huge := "parameter id: " + strings.Repeat("é", 1<<20) // 2 MiB of two-byte runes
	rec := httptest.NewRecorder()
	WriteProblem(rec, Problem{Type: "about:blank", Title: "Bad Request", Status: http.StatusBadRequest,
		Detail: huge, Instance: "/apis/cms/v1/branches/" + strings.Repeat("a", 10000)})
	if rec.Body.Len() > 4*maxProblemText {
		t.Fatalf("ProblemDetails of %d bytes", rec.Body.Len())
	}
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"detail": p.Detail, "instance": p.Instance} {
		if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || len(s) > maxProblemText+len("…") || len(s) < maxProblemText-4 {
			t.Errorf("%s: %d bytes, valid UTF-8 %v, ends %q", name, len(s), utf8.ValidString(s), s[max(0, len(s)-8):])
		}
	}
	if !strings.HasPrefix(p.Detail, "parameter id: éé") {
		t.Errorf("detail lost its beginning: %.40q", p.Detail)
	}
	rec = httptest.NewRecorder()
	WriteProblem(rec, Problem{Status: 404, Title: "Not Found", Detail: "not found: branch 7", Instance: "/x"})
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Detail != "not found: branch 7" || p.Instance != "/x" {
		t.Errorf("short texts changed: %+v %v", p, err)
	}
}
