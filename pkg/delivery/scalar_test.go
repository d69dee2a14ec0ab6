package delivery

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// slowEncodeValue is encodeValue without the fast paths.
func slowEncodeValue(dt string, raw json.RawMessage) (any, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil, false
		}
		if dt == "XmlRef" {
			return map[string]any{"XML": x}, true
		}
		return x, true
	case float64:
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			if id, err := n.Int64(); err == nil {
				return id, true
			}
		}
		return x, true
	case bool:
		return x, true
	}
	return nil, false
}

func TestScalarFastPathsMatchJSON(t *testing.T) {
	inputs := []string{`0`, `7`, `-7`, `123456789012345678`, `1234567890123456789`, `9223372036854775808`,
		`012`, `-`, `1.5`, `1e3`, `-0`, `""`, `"a"`, `"héllo"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"\xff\"",
		`"12"`, `true`, `false`, `null`, `[1]`, `{}`, `"`, ` 5`, `"tab	x"`,
		// numbers beyond plainInt: fractions, exponents, 19 digits and more,
		// out of range, and what is not quite a number.
		`12.34`, `-0.5`, `0.0`, `1E3`, `1e+3`, `1e-3`, `2.5e2`, `-1.25E-2`, `99999999999999999999`,
		`-9223372036854775808`, `-9223372036854775809`, `1e400`, `-1e400`, `4.9e-324`, `1e-400`, `1.`, `.5`,
		`01.5`, `1e`, `1e+`, `+1`, `--1`, `1.5 `, `1,5`, `0x10`, `1.5e3.2`, `-0.0`, `100.000`}
	for _, in := range inputs {
		for _, dt := range []string{"String", "XmlRef"} {
			got, gok := encodeValue(dt, json.RawMessage(in))
			want, wok := slowEncodeValue(dt, json.RawMessage(in))
			if gok != wok || !reflect.DeepEqual(got, want) {
				t.Errorf("encodeValue(%s, %q) = %#v %v, want %#v %v", dt, in, got, gok, want, wok)
			}
		}
		var n json.Number
		wantID, wantOK := int64(0), false
		if json.Unmarshal([]byte(in), &n) == nil {
			if id, err := n.Int64(); err == nil {
				wantID, wantOK = id, true
			}
		}
		if id, ok := refOf(json.RawMessage(in)); ok != wantOK || ok && id != wantID {
			t.Errorf("refOf(%q) = %d %v, want %d %v", in, id, ok, wantID, wantOK)
		}
	}
}

func TestTagsAndDocIDsAreTheirFormat(t *testing.T) {
	for _, n := range [][2]int64{{4, 2100000}, {0, 0}, {-1, -9223372036854775808}, {9223372036854775807, 12}} {
		if got, want := ObjTag(n[0], n[1]), fmt.Sprintf("obj:%d:%d", n[0], n[1]); got != want {
			t.Errorf("ObjTag = %q, want %q", got, want)
		}
		if got, want := indexdoc.DocID(n[0], n[1]), fmt.Sprintf("%d-%d", n[0], n[1]); got != want {
			t.Errorf("DocID = %q, want %q", got, want)
		}
	}
}
