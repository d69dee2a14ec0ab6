package search_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// DecodeSourceFields decodes what DecodeSource does, for the named
// fields only.
func TestDecodeSourceFields(t *testing.T) {
	fields := map[string]any{"k": []any{"a", `q"uo\te}]`, "{[x"}, "n": int64(7), "d": 2.5, "b": true,
		"t": time.Date(2024, 3, 1, 8, 0, 0, 123000000, time.UTC)}
	raw, err := search.EncodeSource(fields)
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range [][]string{{"k"}, {"n", "t", "missing"}, {}, {"k", "n", "d", "b", "t"}} {
		got, err := m.DecodeSourceFields(raw, names)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{}
		for _, n := range names {
			if v, ok := fields[n]; ok {
				want[n] = v
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeSourceFields(%v) = %#v, want %#v", names, got, want)
		}
	}
	for _, bad := range []string{`{"n": "x"}`, `{"n": 1`, `{"k": "a}`, `["n"]`, `{"k": ["a", {"x": 1}]}`, `{"n" 1}`, ``} {
		if _, err := m.DecodeSourceFields([]byte(bad), []string{"n", "k"}); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	got, err := m.DecodeSourceFields([]byte(` { "x" : {"a": [1, "]"]}, "n" : 3 } `), []string{"n"})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"n": int64(3)}) {
		t.Errorf("spaced source: %v, %v", got, err)
	}
}
