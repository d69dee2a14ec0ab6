package indexwriter

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/store"
)

func TestAddSortKeys(t *testing.T) {
	const (
		en, de, fr          = 201, 202, 203
		aStr, aNum, aDate   = 10, 11, 12
		aBool, aRef, aMulti = 13, 14, 15
		aXML, aEmpty, aVar  = 16, 17, 18
		aUnknown, aNumStr   = 19, 20
	)
	val := func(attr, lang, variant int64, j string) store.Value {
		return store.Value{AttributeID: attr, Language: lang, Variant: variant, JSON: json.RawMessage(j)}
	}
	o := &resolved{values: []store.Value{
		val(aStr, de, 0, `"Zebra"`), val(aStr, 0, 0, `"neutral"`), // en falls back to 0, fr to de
		val(aNum, 0, 0, `-12.5`), val(aNum, 0, 1, `99`), // variant 1 ignored
		val(aDate, 0, 0, `"2024-03-01T10:00:00+02:00"`),
		val(aBool, 0, 0, `false`),
		val(aRef, 0, 0, `42`),
		val(aMulti, en, 0, `"b"`), val(aMulti, en, 0, `"A"`), val(aMulti, en, 0, `"b"`),
		val(aXML, 0, 0, `"<p>x</p>"`),
		val(aEmpty, en, 0, `""`), val(aEmpty, 0, 0, `"shown only without en"`), // en selects "" = no value
		val(aVar, en, 2, `"variant only"`),
		val(aUnknown, 0, 0, `"Unknown"`),
		val(aNumStr, 0, 0, `"7"`), val(aNumStr, fr, 0, `true`), // a bool is no number
	}}
	types := map[int64]string{aStr: "String", aNum: "Decimal", aDate: "DateTime", aBool: "Boolean", aRef: "ObjRef",
		aMulti: "String", aXML: "XmlRef", aEmpty: "String", aVar: "String", aNumStr: "Integer"}
	chains := langChains{en: {en, 0}, de: {de, 0}, fr: {fr, de, 0}}
	f := fields{}
	addSortKeys(f, o, types, chains)

	date := indexdoc.EncodeDate(time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC))
	want := fields{
		indexdoc.SortKeyField(aStr, en): []any{"neutral"}, indexdoc.SortKeyField(aStr, de): []any{"zebra"}, indexdoc.SortKeyField(aStr, fr): []any{"zebra"},
		indexdoc.SortKeyField(aNum, en): []any{indexdoc.EncodeNumber(-12.5)}, indexdoc.SortKeyField(aNum, de): []any{indexdoc.EncodeNumber(-12.5)}, indexdoc.SortKeyField(aNum, fr): []any{indexdoc.EncodeNumber(-12.5)},
		indexdoc.SortKeyField(aDate, en): []any{date}, indexdoc.SortKeyField(aDate, de): []any{date}, indexdoc.SortKeyField(aDate, fr): []any{date},
		indexdoc.SortKeyField(aBool, en): []any{"false"}, indexdoc.SortKeyField(aBool, de): []any{"false"}, indexdoc.SortKeyField(aBool, fr): []any{"false"},
		indexdoc.SortKeyField(aRef, en): []any{indexdoc.EncodeNumber(42)}, indexdoc.SortKeyField(aRef, de): []any{indexdoc.EncodeNumber(42)}, indexdoc.SortKeyField(aRef, fr): []any{indexdoc.EncodeNumber(42)},
		indexdoc.SortKeyField(aMulti, en): []any{"b", "a"},
		indexdoc.SortKeyField(aEmpty, de): []any{"shown only without en"}, indexdoc.SortKeyField(aEmpty, fr): []any{"shown only without en"},
		indexdoc.SortKeyField(aUnknown, en): []any{"unknown"}, indexdoc.SortKeyField(aUnknown, de): []any{"unknown"}, indexdoc.SortKeyField(aUnknown, fr): []any{"unknown"},
		indexdoc.SortKeyField(aNumStr, en): []any{indexdoc.EncodeNumber(7)}, indexdoc.SortKeyField(aNumStr, de): []any{indexdoc.EncodeNumber(7)},
	}
	if !reflect.DeepEqual(f, want) {
		for k, v := range f {
			if !reflect.DeepEqual(v, want[k]) {
				t.Errorf("%s = %v, want %v", k, v, want[k])
			}
		}
		for k, v := range want {
			if _, ok := f[k]; !ok {
				t.Errorf("%s missing, want %v", k, v)
			}
		}
	}
	if got := indexdoc.SortKeyField(5, 201); got != "sortkey_5_201" {
		t.Errorf("indexdoc.SortKeyField = %q", got)
	}
}

// TestSortKeyValueOrder: encoded keys order byte-wise like the values.
func TestSortKeyValueOrder(t *testing.T) {
	for _, tc := range []struct {
		kind indexdoc.SortKind
		asc  []string // raw values in ascending order
	}{
		{indexdoc.SortNumber, []string{"-1e9", "-12.5", "-1", "-0.25", "0", "0.25", "3", "12.5", "100", "1e12"}},
		{indexdoc.SortDate, []string{"1999-12-31", "2024-03-01T09:59:59Z", "2024-03-01T10:00:00+00:00", "2024-03-01T10:00:00.5Z", "2030-01-01"}},
		{indexdoc.SortBool, []string{"false", "true"}},
		{indexdoc.SortString, []string{"Apple", "banana", "Cherry", "ärger"}},
	} {
		prev := ""
		for i, r := range tc.asc {
			s, ok := indexdoc.SortKeyValue(tc.kind, r)
			if !ok {
				t.Fatalf("kind %d: %q is no value", tc.kind, r)
			}
			if i > 0 && !(prev < s) {
				t.Errorf("kind %d: key of %q (%q) not after the previous (%q)", tc.kind, r, s, prev)
			}
			prev = s
		}
	}
	if a, _ := indexdoc.SortKeyValue(indexdoc.SortNumber, "-0"); a != indexdoc.EncodeNumber(0) {
		t.Errorf("-0 = %q, want the key of 0", a)
	}
	for _, tc := range []struct {
		kind indexdoc.SortKind
		raw  string
	}{{indexdoc.SortString, ""}, {indexdoc.SortNumber, "x"}, {indexdoc.SortDate, "yesterday"}, {indexdoc.SortBool, "maybe"}} {
		if s, ok := indexdoc.SortKeyValue(tc.kind, tc.raw); ok {
			t.Errorf("kind %d: %q = %q, want no value", tc.kind, tc.raw, s)
		}
	}
}
