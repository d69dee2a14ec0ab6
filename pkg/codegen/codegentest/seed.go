package codegentest

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
)

// DataTypes are the data types Seed gives an attribute each (every one the
// value model knows).
var DataTypes = []string{"String", "TextRef", "TextRef.JavaScript", "TextRef.CSS", "String.DataType",
	"String.InheritanceBehavior", "String.UserName", "String.RGBColor", "Integer", "Decimal", "Float", "Boolean",
	"DateTime", "DateTime.Date", "ObjRef", "BinRef", "BinRef.Icon", "BinRef.Thumbnail", "XmlRef.SimpleHtml",
	"XmlRef.VisualDocument"}

// sample is a valid value of each data type (references get a target).
var sample = map[string]any{"String": "text", "TextRef": "text", "TextRef.JavaScript": "return null;",
	"TextRef.CSS": "p { }", "String.DataType": "String", "String.InheritanceBehavior": "None",
	"String.UserName": "admin", "String.RGBColor": "#ff0000", "Integer": 42, "Decimal": 19.5, "Float": 0.25,
	"Boolean": true, "DateTime": "2025-06-15T10:30:00Z", "DateTime.Date": "2025-06-15",
	"XmlRef.SimpleHtml": "<div><p>Hi</p></div>", "XmlRef.VisualDocument": "<div><p>Doc</p></div>"}

// Fixture names what Seed created, by ApiIdentifier.
type Fixture struct {
	Types, Attributes, Objects map[string]int64
	// Transaction is the last write (for X-Cms-Min-Version).
	Transaction int64
}

// AttrAPI is the ApiIdentifier Seed gives the attribute of data type dt
// (with "Multi" and "Lang" appended for the multi-valued and
// language-dependent variants).
func AttrAPI(dt string, multi, lang bool) string {
	s := "v" + strings.ReplaceAll(dt, ".", "")
	if multi {
		s += "Multi"
	}
	if lang {
		s += "Lang"
	}
	return s
}

type attrSpec struct {
	api, dt, desc string
	multi, lang   bool
}

// Seed writes on branch 4 of c a model for the generator tests:
//
//   - "product", whose create form lists an attribute of every data type,
//     multi-valued and language-dependent ones, and attributes with awkward
//     ApiIdentifiers (class, _2ndValue, my-attr.v2, toString, Id, price and
//     Price) and descriptions that try to end their comments;
//   - "Product" (colliding with product) without forms, whose object uses
//     two attributes;
//   - "_2ndType" with a detail form of two attributes, the reference target;
//   - one object of each, the product one with a value for every attribute.
func Seed(ctx context.Context, c *content.Service) (Fixture, error) {
	f := Fixture{Types: map[string]int64{}, Attributes: map[string]int64{}, Objects: map[string]int64{}}
	var specs []attrSpec
	for _, dt := range DataTypes {
		specs = append(specs, attrSpec{api: AttrAPI(dt, false, false), dt: dt})
	}
	for _, v := range []attrSpec{{dt: "String", multi: true}, {dt: "Integer", multi: true}, {dt: "ObjRef", multi: true},
		{dt: "String", lang: true}, {dt: "Decimal", lang: true}, {dt: "String", multi: true, lang: true}} {
		v.api = AttrAPI(v.dt, v.multi, v.lang)
		specs = append(specs, v)
	}
	specs = append(specs,
		attrSpec{api: "class", dt: "String", desc: "A keyword. */ export const injected = 1; /* </summary> <b>&amp;"},
		attrSpec{api: "_2ndValue", dt: "Boolean", desc: "line one\r\nline two\u2028three\u2029four\u0085five"},
		attrSpec{api: "my-attr.v2", dt: "Float"},
		attrSpec{api: "toString", dt: "String"},
		attrSpec{api: "Id", dt: "String"},
		attrSpec{api: "price", dt: "Decimal"},
		attrSpec{api: "Price", dt: "Decimal"},
	)
	in := make([]content.ObjectInput, len(specs))
	for i, s := range specs {
		vals := []content.ValueInput{val(content.AttrDataType, 0, s.dt), val(content.AttrName, content.LanguageEnUS, s.api)}
		if s.multi {
			vals = append(vals, val(content.AttrAllowMultiple, 0, true))
		}
		if s.lang {
			vals = append(vals, val(content.AttrLanguageDependent, 0, true))
		}
		if s.desc != "" {
			vals = append(vals, val(1012, content.LanguageEnUS, s.desc))
		}
		in[i] = content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: &specs[i].api, Values: vals}
	}
	ids, err := create(ctx, c, &f, in)
	if err != nil {
		return f, fmt.Errorf("attributes: %w", err)
	}
	for i, s := range specs {
		f.Attributes[s.api] = ids[i]
	}
	// Forms: product's lists every attribute, 2ndType's two.
	productForm := content.ObjectInput{TypeID: content.TypeForm}
	for _, id := range ids {
		productForm.Values = append(productForm.Values, val(content.AttrFormContent, 0, id))
	}
	otherForm := content.ObjectInput{TypeID: content.TypeForm, Values: []content.ValueInput{
		val(content.AttrFormContent, 0, f.Attributes["vString"]), val(content.AttrFormContent, 0, f.Attributes["vInteger"])}}
	forms, err := create(ctx, c, &f, []content.ObjectInput{productForm, otherForm})
	if err != nil {
		return f, fmt.Errorf("forms: %w", err)
	}
	types := []struct {
		api  string
		vals []content.ValueInput
	}{
		{"product", []content.ValueInput{val(content.AttrName, content.LanguageEnUS, "Product"),
			val(1012, content.LanguageEnUS, "A product. */ /* the end"), val(content.AttrTypeCreateForm, 0, forms[0])}},
		{"Product", []content.ValueInput{val(content.AttrName, content.LanguageEnUS, "Product, other casing")}},
		{"_2ndType", []content.ValueInput{val(content.AttrTypeDetailForms, 0, forms[1])}},
	}
	in = nil
	for i := range types {
		in = append(in, content.ObjectInput{TypeID: content.RootID, APIIdentifier: &types[i].api, Values: types[i].vals})
	}
	if ids, err = create(ctx, c, &f, in); err != nil {
		return f, fmt.Errorf("types: %w", err)
	}
	for i, t := range types {
		f.Types[t.api] = ids[i]
	}
	return f, seedObjects(ctx, c, &f, specs)
}

// seedObjects writes the objects: the reference target first.
func seedObjects(ctx context.Context, c *content.Service, f *Fixture, specs []attrSpec) error {
	ids, err := create(ctx, c, f, []content.ObjectInput{{TypeID: f.Types["_2ndType"], Values: []content.ValueInput{
		val(f.Attributes["vString"], 0, "target"), val(content.AttrName, content.LanguageEnUS, "Target")}}})
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	target := ids[0]
	f.Objects["target"] = target
	product := content.ObjectInput{TypeID: f.Types["product"], Values: []content.ValueInput{
		val(content.AttrName, content.LanguageEnUS, "Sensor"), val(content.AttrName, content.LanguageDeDE, "Sensor DE")}}
	for _, s := range specs {
		v, ok := sample[s.dt]
		if s.dt == "ObjRef" || strings.HasPrefix(s.dt, "BinRef") {
			v, ok = target, true
		}
		if !ok {
			continue
		}
		a := f.Attributes[s.api]
		var lang int64
		if s.lang {
			lang = content.LanguageEnUS
			product.Values = append(product.Values, val(a, content.LanguageDeDE, v))
		}
		product.Values = append(product.Values, val(a, lang, v))
		if s.multi {
			product.Values = append(product.Values, val(a, lang, v))
		}
	}
	other := content.ObjectInput{TypeID: f.Types["Product"], Values: []content.ValueInput{
		val(f.Attributes["class"], 0, "other"), val(f.Attributes["vInteger"], 0, 7)}}
	if ids, err = create(ctx, c, f, []content.ObjectInput{product, other}); err != nil {
		return fmt.Errorf("objects: %w", err)
	}
	f.Objects["sensor"], f.Objects["other"] = ids[0], ids[1]
	return nil
}

func create(ctx context.Context, c *content.Service, f *Fixture, in []content.ObjectInput) ([]int64, error) {
	tx, ids, err := c.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}, Comment: "codegen fixture"}, in)
	if err != nil {
		return nil, err
	}
	f.Transaction = tx.ID
	return ids, nil
}

func val(attr, lang int64, v any) content.ValueInput {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}
