package etag

import "testing"

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		header string
		ok     bool
	}{{`"a"`, true}, {`W/"a"`, true}, {`"b", "a"`, true}, {`*`, true}, {`"b"`, false}, {``, false}, {`a`, false}} {
		if got := Matches(c.header, `"a"`); got != c.ok {
			t.Errorf("Matches(%q) = %v", c.header, got)
		}
	}
}

// TestOf: a strong, quoted 22-character tag that changes with the
// operation, the body and the tags, and only with them.
func TestOf(t *testing.T) {
	base := Of("op", []byte("body"), []string{"a", "b"})
	if len(base) != 24 || base[0] != '"' || base[23] != '"' {
		t.Fatalf("Of = %s, want a quoted 22-character tag", base)
	}
	if Of("op", []byte("body"), []string{"a", "b"}) != base {
		t.Error("equal answers got different tags")
	}
	for _, other := range []string{Of("op2", []byte("body"), []string{"a", "b"}), Of("op", []byte("body2"), []string{"a", "b"}),
		Of("op", []byte("body"), []string{"a"}), Of("op", []byte("body"), nil)} {
		if other == base {
			t.Errorf("a different answer got the same tag %s", base)
		}
	}
}
