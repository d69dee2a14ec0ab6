package errkind

import (
	"errors"
	"fmt"
	"testing"
)

func TestKinds(t *testing.T) {
	errMissing := New(NotFound, "thing: not found")
	wrapped := fmt.Errorf("reading 5: %w", errMissing)
	if !errors.Is(wrapped, errMissing) || !errors.Is(wrapped, NotFound) || errors.Is(wrapped, Invalid) {
		t.Fatalf("errors.Is on %v: sentinel %v, NotFound %v, Invalid %v", wrapped,
			errors.Is(wrapped, errMissing), errors.Is(wrapped, NotFound), errors.Is(wrapped, Invalid))
	}
	if got := Of(wrapped); got != NotFound {
		t.Errorf("Of = %v, want NotFound", got)
	}
	if got := Of(errors.New("plain")); got != 0 {
		t.Errorf("Of(plain) = %v, want 0", got)
	}
	if wrapped.Error() != "reading 5: thing: not found" {
		t.Errorf("message = %q", wrapped.Error())
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		{"aaaaaaaaaä", 10, "aaaaaaaaa…"}, // ä is two bytes: the cut moves back to its start
		{"äää", 1, "…"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestTrimLabel(t *testing.T) {
	for in, want := range map[string]string{
		"invalid argument: filter: unknown operator": "filter: unknown operator",
		"invalid request: attribute 7: too long":     "attribute 7: too long",
		"invalid request: invalid argument: x":       "x",
		"invalid argument":                           "invalid argument", // nothing else to say
		"not found: branch 7":                        "not found: branch 7",
		"attribute 7: invalid argument: x":           "attribute 7: invalid argument: x",
	} {
		if got := TrimLabel(in); got != want {
			t.Errorf("TrimLabel(%q) = %q, want %q", in, got, want)
		}
		if HasLabel(want) {
			t.Errorf("HasLabel(%q) after trimming", want)
		}
	}
	if !HasLabel("invalid argument: x") || HasLabel("invalid arguments: x") {
		t.Error("HasLabel does not tell a label")
	}
}
