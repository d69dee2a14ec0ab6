package gateway

import "testing"

func TestETagMatches(t *testing.T) {
	for _, c := range []struct {
		header string
		ok     bool
	}{{`"a"`, true}, {`W/"a"`, true}, {`"b", "a"`, true}, {`*`, true}, {`"b"`, false}, {``, false}, {`a`, false}} {
		if got := ETagMatches(c.header, `"a"`); got != c.ok {
			t.Errorf("ETagMatches(%q) = %v", c.header, got)
		}
	}
}
