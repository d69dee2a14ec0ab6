package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/codegen/codegentest"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// seeded returns a generator over a fresh SQLite store holding the
// codegentest model.
func seeded(t testing.TB, l Limits) (*Service, *content.Service, codegentest.Fixture) {
	t.Helper()
	c := setups.Content(t)
	f, err := codegentest.Seed(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return New(c, l), c, f
}

func gen(t *testing.T, s *Service, r Request) string {
	t.Helper()
	if r.Branch == "" {
		r.Branch = "4"
	}
	src, err := s.Generate(context.Background(), r)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", r, err)
	}
	return src
}

// TestLoadRule: ids=all is every custom type with an ApiIdentifier; a
// type's attributes are its forms' content plus attributeName, else the
// attributes its objects use.
func TestLoadRule(t *testing.T) {
	s, _, f := seeded(t, Limits{})
	all := gen(t, s, Request{Language: "typescript"})
	if again := gen(t, s, Request{Language: "typescript", IDs: "all"}); again != all {
		t.Error(`ids=all differs from no ids`)
	}
	for _, want := range []string{
		"export type Product = CmsObject<\"product\", ProductProps>;",
		"export type Product_" + itoa(f.Types["Product"]) + " = CmsObject<\"Product\", Product_" + itoa(f.Types["Product"]) + "Props>;",
		"export type _2ndType = CmsObject<\"_2ndType\", _2ndTypeProps>;",
		"  attributeName?: string;",
		"  vDecimalLang?: number;",
		"  vStringMultiLang?: string[];",
		"  vObjRefMulti?: CmsRef[];",
		`  "my-attr.v2"?: number;`,
		" * A keyword. *\\/ export const injected = 1; /* </summary> <b>&amp;",
		" * Attribute " + itoa(f.Attributes["vObjRef"]) + " (ObjRef).",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("ids=all lacks %q", want)
		}
	}
	if strings.Contains(all, "TypeAttribute") || strings.Contains(all, "typeLanguage") {
		t.Error("ids=all generated a system type")
	}
	// Product has no forms: the attributes its object uses, no more.
	one := gen(t, s, Request{Language: "typescript", Type: itoa(f.Types["Product"])})
	props := between(one, "Props {\n", "}\n")
	if !strings.Contains(props, "  class?: string;") || !strings.Contains(props, "  vInteger?: number;") ||
		strings.Count(props, "?:") != 2 {
		t.Errorf("Product (no forms) props:\n%s", props)
	}
	// _2ndType: its detail form's two attributes and attributeName.
	two := gen(t, s, Request{Language: "typescript", IDs: "_2ndType"})
	if props := between(two, "Props {\n", "}\n"); strings.Count(props, "?:") != 3 || !strings.Contains(props, "attributeName?") {
		t.Errorf("2ndType props:\n%s", props)
	}
	// Names do not depend on what one answer holds.
	if !strings.Contains(one, "export type Product_"+itoa(f.Types["Product"])+" =") {
		t.Error("Product alone is named differently than with product")
	}
	// Order of ids is kept; a repeated identifier is generated once.
	cs := gen(t, s, Request{IDs: "_2ndType, product,_2ndType," + itoa(f.Types["product"])})
	if strings.Count(cs, "public partial class") != 2 || strings.Index(cs, "class _2ndType") > strings.Index(cs, "class Product") {
		t.Errorf("ids order: %s", classes(cs))
	}
}

// TestLoadErrors: the status kinds of the wrong requests.
func TestLoadErrors(t *testing.T) {
	s, c, f := seeded(t, Limits{MaxIDs: 3})
	ctx := context.Background()
	for _, tc := range []struct {
		r    Request
		want errkind.Kind
	}{
		{Request{Branch: "4", Language: "java"}, errkind.Invalid},
		{Request{Branch: "4", IDs: "nope"}, errkind.NotFound},
		{Request{Branch: "4", IDs: "product,nope"}, errkind.NotFound},
		{Request{Branch: "4", Type: "999999"}, errkind.NotFound},
		{Request{Branch: "nope"}, errkind.NotFound},
		{Request{Branch: "4", IDs: "a,b,c,d"}, errkind.Invalid},
		{Request{Branch: "4", IDs: ",, ,"}, errkind.Invalid},
		{Request{Branch: "4", IDs: "+4"}, errkind.Invalid},
		{Request{Branch: "4", Type: itoa(f.Objects["sensor"])}, errkind.Invalid}, // not a type
		{Request{Branch: "4", Type: "attributeName"}, errkind.Invalid},           // not a type
	} {
		if _, err := s.Generate(ctx, tc.r); errkind.Of(err) != tc.want {
			t.Errorf("Generate(%+v) = %v, want kind %v", tc.r, err, tc.want)
		}
	}
	// A deleted type is 400.
	_, ids, err := c.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.DeleteObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}, []string{itoa(ids[0])}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Generate(ctx, Request{Branch: "4", Type: itoa(ids[0])}); !errors.Is(err, errkind.Invalid) ||
		!strings.Contains(err.Error(), "deleted") {
		t.Errorf("deleted type: %v", err)
	}
	// An identifier matching two objects (the ApiIdentifier of one, the
	// Guid of another) is 422.
	guid := "abcdef01-2345-6789-abcd-ef0123456789"
	if _, _, err := c.CreateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}, []content.ObjectInput{
		{TypeID: content.RootID, APIIdentifier: &guid}, {TypeID: content.RootID, GUID: guid}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Generate(ctx, Request{Branch: "4", IDs: guid}); errkind.Of(err) != errkind.Ambiguous {
		t.Errorf("ambiguous identifier: %v, want kind Ambiguous", err)
	}
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	before, _, _ := strings.Cut(after, to)
	return before
}

func classes(cs string) []string {
	var out []string
	for l := range strings.SplitSeq(cs, "\n") {
		if strings.Contains(l, "public partial class") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	slices.Sort(out)
	return out
}

// TestUnnamedTypes: a type without ApiIdentifier is generated when named
// (by id or Guid), in both languages, its class named from its display
// name made an identifier, unique against the types with an ApiIdentifier
// (which keep their names) and against each other in id order; ids=all
// leaves it out; a reference to it names its class.
func TestUnnamedTypes(t *testing.T) {
	s, c, _ := seeded(t, Limits{})
	ctx := context.Background()
	all := gen(t, s, Request{})
	ch := content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}
	name := func(n string) []content.ValueInput {
		if n == "" {
			return nil
		}
		return []content.ValueInput{val(content.AttrName, content.LanguageEnUS, n)}
	}
	_, ids, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{
		{TypeID: content.RootID, Values: name("Gadget list (v2)")},
		{TypeID: content.RootID, Values: name("product")}, // the ApiIdentifier of another type
		{TypeID: content.RootID, Values: name("Widget")},
		{TypeID: content.RootID, Values: name("widget")}, // the same name as the one before
		{TypeID: content.RootID},                         // no name
		{TypeID: content.RootID, Values: name("2 Ärger")},
		{TypeID: content.RootID, Values: name("CmsRef")}, // a shared TypeScript declaration
	})
	if err != nil {
		t.Fatal(err)
	}
	gadget, prod, widget, widget2, bare, digit, cmsRef := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	// An attribute referencing the widget type, used by an object of the
	// gadget type (a type without forms takes the attributes its objects
	// use).
	api := "wireWidgetRef"
	_, attr, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.TypeAttribute, APIIdentifier: &api,
		Values: []content.ValueInput{val(content.AttrDataType, 0, "ObjRef"), val(content.AttrReferencedTypes, 0, widget)}}})
	if err != nil {
		t.Fatal(err)
	}
	_, w, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: widget}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: gadget,
		Values: []content.ValueInput{val(attr[0], 0, w[0])}}}); err != nil {
		t.Fatal(err)
	}
	if again := gen(t, s, Request{}); again != all {
		t.Error("ids=all changed with types without ApiIdentifier")
	}
	list := itoa(gadget) + "," + itoa(prod) + "," + itoa(widget) + "," + itoa(widget2) + "," + itoa(bare) + "," + itoa(digit) + "," + itoa(cmsRef) + ",product"
	cs := gen(t, s, Request{IDs: list})
	ts := gen(t, s, Request{Language: "typescript", IDs: list})
	for _, want := range []string{
		"public partial class GadgetListV2\n",
		"public partial class Product_" + itoa(prod) + "\n",
		"public partial class Product\n", // the type with the ApiIdentifier keeps its name
		"public partial class Widget\n",
		"public partial class Widget_" + itoa(widget2) + "\n",
		"public partial class Type" + itoa(bare) + "\n",
		"public partial class _2Rger\n",
		"public partial class CmsRef\n",
		"public const string TypeApiIdentifier = null;",
		"/// Object type " + itoa(gadget) + " (no ApiIdentifier).",
		"(ObjRef, references Widget). ApiIdentifier wireWidgetRef.",
		"public int? WireWidgetRef { get; set; }",
	} {
		if !strings.Contains(cs, want) {
			t.Errorf("C# lacks %q:\n%s", want, classes(cs))
		}
	}
	for _, want := range []string{
		"export type GadgetListV2 = CmsObject<\"\", GadgetListV2Props>;",
		"export type Product_" + itoa(prod) + " = CmsObject<\"\", Product_" + itoa(prod) + "Props>;",
		"export type Widget_" + itoa(widget2) + "List = CmsList<Widget_" + itoa(widget2) + ">;",
		"export type CmsRef_" + itoa(cmsRef) + " = CmsObject<\"\", CmsRef_" + itoa(cmsRef) + "Props>;",
		"export type Product = CmsObject<\"product\", ProductProps>;",
		"  wireWidgetRef?: CmsRef;",
		" * Attribute " + itoa(attr[0]) + " (ObjRef, references Widget).",
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("TypeScript lacks %q", want)
		}
	}
	// Asked for alone, or by Guid, a type has the same name.
	one := gen(t, s, Request{Type: itoa(widget2)})
	if !strings.Contains(one, "public partial class Widget_"+itoa(widget2)+"\n") {
		t.Errorf("alone: %v", classes(one))
	}
	o, err := c.GetObject(ctx, "4", itoa(gadget), content.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if byGUID := gen(t, s, Request{Language: "typescript", Type: o.GUID}); !strings.Contains(byGUID, "export type GadgetListV2 =") {
		t.Errorf("by Guid:\n%s", byGUID)
	}
	if err := checkCSharp(cs); err != nil {
		t.Error(err)
	}
	if err := checkTypeScript(ts); err != nil {
		t.Error(err)
	}
}

func val(attr, lang int64, v any) content.ValueInput {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

// TestBinaryProxyFileProps: a type whose form lists the file hash also has
// the file props Delivery derives with it.
func TestBinaryProxyFileProps(t *testing.T) {
	s, c, _ := seeded(t, Limits{})
	ctx := context.Background()
	ch := content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}
	_, form, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.TypeForm, Values: []content.ValueInput{
		val(content.AttrFormContent, 0, 11000), val(content.AttrFormContent, 0, 11005)}}})
	if err != nil {
		t.Fatal(err)
	}
	api := "picture"
	if _, _, err := c.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.RootID, APIIdentifier: &api,
		Values: []content.ValueInput{val(5009, 0, true), val(content.AttrTypeCreateForm, 0, form[0])}}}); err != nil {
		t.Fatal(err)
	}
	ts := gen(t, s, Request{Language: "typescript", Type: "picture"})
	for _, want := range []string{"  externalBinaryMD5?: string;", "  externalBinaryFileExtension?: string;",
		"  externalBinaryFileName?: string;", "  externalBinaryMediaType?: CmsRef;", "  externalBinaryThumbnail?: CmsRef;"} {
		if !strings.Contains(ts, want) {
			t.Errorf("picture lacks %q:\n%s", want, between(ts, "Props {\n", "}\n"))
		}
	}
}
