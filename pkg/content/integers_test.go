package content

import (
	"strings"
	"testing"
)

// Integer values beyond ±(2^53−1) are refused naming the attribute, never
// rounded; the bounds themselves are accepted.
func TestIntegerRange(t *testing.T) {
	d := attrDef{id: 77, dataType: "Integer", kind: kindInteger}
	for _, c := range []struct {
		json string
		ok   bool
	}{
		{"9007199254740991", true}, {"-9007199254740991", true}, {"0", true},
		{"9007199254740992", false}, {"9007199254740993", false}, {"-9007199254740992", false},
		{"9223372036854775807", false}, {"1e3", false},
	} {
		got, _, err := checkScalar(d, []byte(c.json))
		switch {
		case c.ok && (err != nil || string(got) != c.json):
			t.Errorf("%s: stored %q, err %v", c.json, got, err)
		case !c.ok && err == nil:
			t.Errorf("%s: accepted", c.json)
		case !c.ok && strings.HasPrefix(c.json, "9007") && !strings.Contains(err.Error(), "attribute 77 (Integer)"):
			t.Errorf("%s: error %q does not name the attribute", c.json, err)
		}
	}
}
