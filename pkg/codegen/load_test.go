package codegen

import (
	"context"
	"errors"
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
	// A type without ApiIdentifier is 400 when asked for, left out of all.
	_, ids, err := c.CreateObjects(ctx, "4", content.Change{User: "admin", Admin: true}, []content.ObjectInput{{TypeID: content.RootID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Generate(ctx, Request{Branch: "4", Type: itoa(ids[0])}); !errors.Is(err, errkind.Invalid) ||
		!strings.Contains(err.Error(), "no ApiIdentifier") {
		t.Errorf("type without ApiIdentifier: %v", err)
	}
	// An identifier matching two objects (the ApiIdentifier of one, the
	// Guid of another) is 422.
	guid := "abcdef01-2345-6789-abcd-ef0123456789"
	if _, _, err := c.CreateObjects(ctx, "4", content.Change{User: "admin", Admin: true}, []content.ObjectInput{
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
