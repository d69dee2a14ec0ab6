package delivery

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// TestMatching: the values of one key, in order, whether they are stored
// together (a shared sub-slice) or scattered (a copy).
func TestMatching(t *testing.T) {
	v := func(attr, lang, variant int64, s string) indexdoc.SourceValue {
		return indexdoc.SourceValue{Attr: attr, Lang: lang, Variant: variant, Value: []byte(`"` + s + `"`)}
	}
	together := []indexdoc.SourceValue{v(1, 0, 0, "a"), v(2, 201, 0, "b"), v(2, 201, 0, "c"), v(2, 202, 0, "d"), v(3, 0, 0, "e")}
	scattered := []indexdoc.SourceValue{v(2, 201, 0, "b"), v(1, 0, 0, "a"), v(2, 201, 0, "c"), v(2, 201, 1, "x")}
	str := func(vals []indexdoc.SourceValue) string {
		out := ""
		for _, x := range vals {
			out += string(x.Value)
		}
		return out
	}
	for _, c := range []struct {
		vals                []indexdoc.SourceValue
		attr, lang, variant int64
		want                string
	}{
		{together, 2, 201, 0, `"b""c"`}, {together, 2, 202, 0, `"d"`}, {together, 3, 0, 0, `"e"`}, {together, 1, 0, 0, `"a"`},
		{together, 2, 0, 0, ``}, {scattered, 2, 201, 0, `"b""c"`}, {scattered, 2, 201, 1, `"x"`}, {nil, 1, 0, 0, ``},
	} {
		got := matching(c.vals, c.attr, c.lang, c.variant)
		if str(got) != c.want {
			t.Errorf("matching(%d,%d,%d) = %s, want %s", c.attr, c.lang, c.variant, str(got), c.want)
		}
		if cap(got) != len(got) {
			t.Errorf("matching(%d,%d,%d): cap %d > len %d lets an append overwrite the source", c.attr, c.lang, c.variant, cap(got), len(got))
		}
	}
}
