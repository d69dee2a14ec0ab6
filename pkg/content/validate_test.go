package content

import (
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func TestValueValidation(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}}))
		target := ids[0]
		ok := []ValueInput{
			vin(sc.title, LanguageEnUS, "Hello"), vin(sc.title, LanguageDeDE, "Hallo"),
			{Attribute: sc.related, JSON: js(target), SortReverse: ptr(int64(0))},
			{Attribute: sc.related, JSON: js(target), SortReverse: ptr(int64(1))},
			vin(sc.rank, 0, 7), vin(sc.body, 0, `<div xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></div>`),
			vin(AttrName, LanguageEnUS, "Display"),
		}
		_, created := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: ok}}))
		got := chk(s.GetObject(ctxBG, "4", id(created[0]), ReadOptions{}))(t)
		if len(got.Values) != len(ok) {
			t.Fatalf("stored %d values, want %d: %v", len(got.Values), len(ok), valuesOf(got))
		}

		must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: TypeLanguage, APIIdentifier: ptr("notAnArticle")}}))
		lang := chk(s.GetObject(ctxBG, "4", "notAnArticle", ReadOptions{}))(t).ID
		bad := []struct {
			name   string
			val    []ValueInput
			detail string
		}{
			{"number for a String", []ValueInput{vin(sc.title, LanguageEnUS, 5)}, "is not a string"},
			{"language 0 for a language dependent attribute", []ValueInput{vin(sc.title, 0, "x")}, "language dependent"},
			{"language for an independent attribute", []ValueInput{vin(sc.rank, LanguageEnUS, 1)}, "language independent"},
			{"unknown language", []ValueInput{vin(sc.title, 999999, "x")}, "does not exist"},
			{"two values for a single-valued attribute", []ValueInput{vin(sc.rank, 0, 1), vin(sc.rank, 0, 2)}, "single value"},
			{"array value", []ValueInput{vin(sc.related, 0, []int64{target})}, "must be a scalar"},
			{"fraction for Integer", []ValueInput{vin(sc.rank, 0, 1.5)}, "integer"},
			{"reference to a wrong type", []ValueInput{vin(sc.related, 0, lang)}, "allowed are"},
			{"reference to a missing object", []ValueInput{vin(sc.related, 0, 999999)}, "does not exist"},
			{"unknown attribute", []ValueInput{vin(999999, 0, "x")}, "attribute 999999 does not exist"},
			{"XHTML without div root", []ValueInput{vin(sc.body, 0, "<p>x</p>")}, "<div> root"},
			{"number for the data type 1001", []ValueInput{vin(AttrDataType, 0, 5)}, "data type name"},
			{"attribute 1021", []ValueInput{vin(AttrApiIdentifier, 0, "x")}, "meta.apiIdentifier"},
			{"unit that does not exist", []ValueInput{{Attribute: sc.rank, JSON: js(1), UnitRef: ptr(int64(999999))}}, "unitRef 999999 is not a unit"},
			{"unit that is no unit", []ValueInput{{Attribute: sc.rank, JSON: js(1), UnitRef: ptr(lang)}}, "is not a unit"},
			{"unit id 0", []ValueInput{{Attribute: sc.rank, JSON: js(1), UnitRef: ptr(int64(0))}}, "not an object id"},
			{"variant without axis", []ValueInput{{Attribute: sc.rank, Variant: 5, JSON: js(1)}}, "no variants"},
			{"duplicate sort key", []ValueInput{
				{Attribute: sc.related, JSON: js(target), SortReverse: ptr(int64(0))},
				{Attribute: sc.related, JSON: js(target), SortReverse: ptr(int64(0))}}, "sortReverse 0"},
		}
		for _, c := range bad {
			_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: c.val}})
			wantErr(t, err, ErrInvalid, c.name)
			if !strings.Contains(err.Error(), c.detail) {
				t.Errorf("%s: error %q does not say %q", c.name, err, c.detail)
			}
		}
		_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: 999999}})
		wantErr(t, err, ErrNotFound, "unknown type")
		_, _, err = s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: target}})
		wantErr(t, err, ErrNotFound, "an object that is not a type as type")
		_, _, err = s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: TypeBranch}})
		wantErr(t, err, ErrInvalid, "a branch through CreateObjects")
	})
}

func TestCheckScalarDataTypes(t *testing.T) {
	cases := []struct {
		dataType, json string
		ok             bool
	}{
		{"Boolean", `true`, true}, {"Boolean", `"true"`, false},
		{"Decimal", `1.25`, true}, {"Decimal", `"1"`, false},
		{"DateTime", `"2025-06-15T10:30:00Z"`, true}, {"DateTime", `"2025-06-15"`, false},
		{"DateTime.Date", `"2025-06-15"`, true}, {"DateTime.Date", `"15.06.2025"`, false},
		{"String.UserName", `"bob"`, true}, {"ObjRef", `-1`, false}, {"ObjRef", `12`, true},
		{"XmlRef.SimpleHtml", `"<div/>"`, true}, {"XmlRef.SimpleHtml", `"<div></div><div></div>"`, false},
		{"XmlRef.SimpleHtml", `"text<div/>"`, false}, {"String", `{"a":1}`, false}, {"String", `"a" "b"`, false},
		{"Unknown.Type", `"anything"`, true},
	}
	for _, c := range cases {
		d := attrDef{id: 1, dataType: c.dataType, kind: dataTypes[c.dataType]}
		_, _, err := checkScalar(d, []byte(c.json))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: err = %v, want ok=%v", c.dataType, c.json, err, c.ok)
		}
	}
}
