package codegen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/codegen/codegentest"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// dataTypes are the data types of the value model (attribute 1001), an
// empty one (unknown) and one this version does not know.
var dataTypes = append(append([]string{}, codegentest.DataTypes...), "", "Future.Type")

// awkwardSchema has a type with every data type, single and multiple,
// language-independent and -dependent, with and without unit; references;
// and names that are keywords, start with digits, collide with each other,
// with generated members and helpers, and descriptions that try to end
// their comments.
func awkwardSchema() Schema {
	var all []Attribute
	id := int64(5000)
	for _, dt := range dataTypes {
		for _, multi := range []bool{false, true} {
			for _, lang := range []bool{false, true} {
				id++
				api := "v" + strings.NewReplacer(".", "_").Replace(dt)
				if multi {
					api += "Multi"
				}
				if lang {
					api += "Lang"
				}
				a := Attribute{ID: id, APIIdentifier: api, Name: dt, DataType: dt, Multiple: multi, LanguageDependent: lang,
					HasUnit: dt == "Decimal" || dt == "Integer"}
				if kindOf(dt) == kindRef {
					a.RefTypes = []string{"product", "2ndType"}
				}
				all = append(all, a)
			}
		}
	}
	awkward := []Attribute{
		{ID: 6001, APIIdentifier: "class", DataType: "String", Description: "A keyword */ /* </summary> <b>&amp;"},
		{ID: 6002, APIIdentifier: "default", DataType: "Integer", Description: "line one\r\nline two\u2028three\u2029four\u0085five\rsix"},
		{ID: 6003, APIIdentifier: "2ndValue", DataType: "Boolean", Description: "bidi \u202e evil \u2066 \x00 nul \ufeff"},
		{ID: 6004, APIIdentifier: "my-attr.v2", DataType: "Float"},
		{ID: 6005, APIIdentifier: "Id", DataType: "String"},
		{ID: 6006, APIIdentifier: "toString", DataType: "String"},
		{ID: 6007, APIIdentifier: "__proto__", DataType: "String"},
		{ID: 6008, APIIdentifier: "constructor", DataType: "String"},
		{ID: 6009, APIIdentifier: "AttributeIds", DataType: "String"},
		{ID: 6010, APIIdentifier: "typeId", DataType: "String"},
		{ID: 6011, APIIdentifier: "price", DataType: "Decimal", Multiple: true, LanguageDependent: true, HasUnit: true},
		{ID: 6012, APIIdentifier: "Price", DataType: "Decimal"},
		{ID: 6013, APIIdentifier: "product", DataType: "ObjRef", Multiple: true, RefTypes: []string{"product"}},
		{ID: 6014, APIIdentifier: "---", DataType: "String"},
		{ID: 6015, APIIdentifier: "price", DataType: "String"}, // same ApiIdentifier as 6011: left out
		{ID: 6016, APIIdentifier: "", DataType: "String"},      // no ApiIdentifier: left out
		{ID: 6017, APIIdentifier: "$dollar", DataType: "String"},
		{ID: 1000, APIIdentifier: "attributeName", Name: "Name", DataType: "String", LanguageDependent: true},
	}
	types := []Type{
		{ID: 3000001, APIIdentifier: "product", Name: "Product", Description: "A product.\n*/ export const x = 1; /*",
			Attributes: append(append([]Attribute{}, all...), awkward...)},
		{ID: 3000002, APIIdentifier: "Product", Name: "Product (other casing)", Attributes: awkward[:4]},
		{ID: 3000003, APIIdentifier: "2ndType", Attributes: awkward[4:8]},
		{ID: 3000004, APIIdentifier: "productProps"},
		{ID: 3000005, APIIdentifier: "cmsObject"},
		{ID: 3000006, APIIdentifier: "DateTime", Attributes: []Attribute{{ID: 6020, APIIdentifier: "when", DataType: "DateTime"}}},
		{ID: 3000007, APIIdentifier: "List", Attributes: []Attribute{{ID: 6021, APIIdentifier: "items", DataType: "Integer", Multiple: true}}},
		{ID: 3000008, APIIdentifier: "System"},
		{ID: 3000009, APIIdentifier: "...", Description: "no letters"},
		{ID: 3000010, APIIdentifier: "Models"},
		{ID: 3000011, APIIdentifier: "Cms"},
		{ID: 3000012, APIIdentifier: "Object", Attributes: []Attribute{{ID: 6022, APIIdentifier: "object", DataType: ""}}},
		// Without ApiIdentifier: named from the display name, after the
		// types with one.
		{ID: 2999999, Name: "Product", Description: "An older type without ApiIdentifier.",
			Attributes: []Attribute{{ID: 6023, APIIdentifier: "other", DataType: "ObjRef", RefTypeIDs: []int64{2999999, 3000001, 3000014}}}},
		{ID: 3000013, Name: "Product"},
		{ID: 3000014, Name: "2 — Übersicht! */"},
		{ID: 3000015},
	}
	emit := make([]int64, len(types))
	for i, t := range types {
		emit[i] = t.ID
	}
	return Schema{Branch: 4, Named: types, Emit: emit}
}

func generate(t *testing.T, lang Language, s Schema) string {
	t.Helper()
	src, err := Generate(lang, s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Generate(lang, s)
	if again != src {
		t.Fatal("two runs over the same schema differ")
	}
	return src
}

// TestNames pins the naming rules (names.go).
func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"attributeName": "AttributeName", "my-type.v2": "MyTypeV2", "2ndPage": "_2ndPage", "_x": "X",
		"a__b": "AB", "---": "", "ÄÖ": "", "class": "Class", "HTMLPage": "HTMLPage",
	} {
		if got := pascal(in); got != want {
			t.Errorf("pascal(%q) = %q, want %q", in, got, want)
		}
	}
	s := awkwardSchema()
	names := typeNames(s.Named, tsReserved, tsSuffixes...)
	for id, want := range map[int64]string{3000001: "Product", 3000002: "Product_3000002", 3000003: "_2ndType",
		3000004: "ProductProps_3000004", 3000005: "CmsObject_3000005", 3000009: "Type3000009", 3000012: "Object_3000012",
		2999999: "Product_2999999", 3000013: "Product_3000013", 3000014: "_2Bersicht", 3000015: "Type3000015"} {
		if names[id] != want {
			t.Errorf("typescript name of %d = %q, want %q", id, names[id], want)
		}
	}
	// Stable: the names of types do not depend on which are emitted, nor
	// on the order they are listed in.
	rev := append([]Type{}, s.Named...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	again := typeNames(rev, tsReserved, tsSuffixes...)
	for id, n := range names {
		if again[id] != n {
			t.Errorf("name of %d changed with the order: %q → %q", id, n, again[id])
		}
	}
	members := memberNames(s.Named[0].Attributes, append([]string{"Product"}, csMembers...)...)
	for id, want := range map[int64]string{6005: "Id_6005", 6009: "AttributeIds_6009", 6010: "TypeId_6010",
		6011: "Price", 6012: "Price_6012", 6013: "Product_6013", 6014: "Attribute6014", 6003: "_2ndValue"} {
		if members[id] != want {
			t.Errorf("C# member of %d = %q, want %q", id, members[id], want)
		}
	}
}

// TestGenerateShapes checks the mapping table on the generated text.
func TestGenerateShapes(t *testing.T) {
	s := awkwardSchema()
	cs := generate(t, CSharp, s)
	ts := generate(t, TypeScript, s)
	for _, want := range []string{
		"public decimal? VDecimal { get; set; }",
		"public global::System.Collections.Generic.List<decimal> VDecimalMulti { get; set; }",
		"public global::System.Collections.Generic.Dictionary<int, decimal> VDecimalLang { get; set; }",
		"public global::System.Collections.Generic.Dictionary<int, global::System.Collections.Generic.List<long>> VIntegerMultiLang { get; set; }",
		"public global::System.DateTime? VDateTime { get; set; }",
		"public int? VObjRef { get; set; }",
		"public string VXmlRefSimpleHtml { get; set; }",
		"public object VFutureType { get; set; }",
		"public bool? VBoolean { get; set; }",
		"public double? VFloat { get; set; }",
		"public long? VInteger { get; set; }",
		"public const string TypeApiIdentifier = \"product\";",
		"public const int VDecimal = 50",
		"public partial class Product_3000002",
		"public partial class Product_2999999",
		"public partial class _2Bersicht",
		"public partial class Type3000015",
		"/// Attribute 6023 (ObjRef, references Product_2999999, product, _2Bersicht). ApiIdentifier other.",
		"/// A keyword */ /* &lt;/summary&gt; &lt;b&gt;&amp;amp;",
	} {
		if !strings.Contains(cs, want) {
			t.Errorf("C# lacks %q", want)
		}
	}
	for _, want := range []string{
		"  vDecimal?: number | CmsUnitValue<number>;",
		"  vDecimalMulti?: (number | CmsUnitValue<number>)[];",
		"  vStringMultiLang?: string[];",
		"  vObjRef?: CmsRef;",
		"  vObjRefMulti?: CmsRef[];",
		"  vXmlRef_SimpleHtml?: CmsXml;",
		"  vBoolean?: boolean;",
		"  vDateTime_Date?: string;",
		"  v?: string | number | boolean;",
		`  "my-attr.v2"?: number;`,
		`  "2ndValue"?: boolean;`,
		"  attributeName?: string;",
		"export type Product = CmsObject<\"product\", ProductProps>;",
		"export type ProductResult = CmsResult<Product>;",
		"export type Product_3000002List = CmsList<Product_3000002>;",
		"export type Product_2999999 = CmsObject<\"\", Product_2999999Props>;",
		" * Attribute 6023 (ObjRef, references Product_2999999, product, _2Bersicht).",
		" * A keyword *\\/ /* </summary> <b>&amp;",
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("TypeScript lacks %q", want)
		}
	}
	for _, src := range []string{cs, ts} {
		for _, bad := range []string{"\u2028", "\u2029", "\u0085", "\r", "\u202e", "\x00", "price?: string"} {
			if strings.Contains(src, bad) {
				t.Errorf("output holds %q", bad)
			}
		}
	}
}

// TestCompile compiles, in one run of each compiler: the awkward model
// with code that uses it (a TypeScript file type-checks Delivery answers
// against the generated types and proves with @ts-expect-error that wrong
// ones fail), the model seeded into a real store (ids=all), and a seeded
// batch of random schemas (the property behind FuzzGenerate).
func TestCompile(t *testing.T) {
	testenv.Tool(t, testenv.MCS) // both or none: skip (locally) before compiling half
	testenv.Tool(t, testenv.TSC)
	s := awkwardSchema()
	cs := map[string]string{"Models.cs": generate(t, CSharp, s), "Use.cs": csUse}
	ts := map[string]string{"models.ts": generate(t, TypeScript, s), "use.ts": tsUse}
	svc, _, _ := seeded(t, Limits{})
	cs["Seeded.cs"] = renamespace(gen(t, svc, Request{IDs: "all"}), "Seeded")
	ts["seeded.ts"] = gen(t, svc, Request{Language: "typescript"})
	r := rand.New(rand.NewPCG(2026, 18))
	for i := range 20 {
		rs := randomSchema(r)
		cs[fmt.Sprintf("Random%02d.cs", i)] = renamespace(generate(t, CSharp, rs), fmt.Sprintf("R%02d", i))
		ts[fmt.Sprintf("random%02d.ts", i)] = generate(t, TypeScript, rs)
	}
	codegentest.CompileCSharp(t, cs)
	codegentest.CompileTypeScript(t, ts)
}

// renamespace moves generated C# into a namespace of its own, so several
// answers compile together.
func renamespace(src, sub string) string {
	return strings.Replace(src, "namespace "+csNamespace+"\n", "namespace "+csNamespace+"."+sub+"\n", 1)
}

// csUse uses the generated classes the way a client fills them from
// Management values.
const csUse = `namespace Client
{
    public static class Use
    {
        public static Cms.Models.Product Fill()
        {
            var p = new Cms.Models.Product { Id = 3000100, Guid = "00000000-0000-0000-0000-000000000001" };
            p.VDecimal = 19.5m;
            p.VDecimalLang = new System.Collections.Generic.Dictionary<int, decimal> { { 201, 1.5m } };
            p.VObjRefMulti = new System.Collections.Generic.List<int> { 1, 2 };
            p.VDateTime = new System.DateTime(2025, 6, 15, 10, 30, 0, System.DateTimeKind.Utc);
            p.Price_6012 = 3m;
            p.Id_6005 = "x";
            var old = new Cms.Models.Product_2999999 { Id = 3000200, Other = 3000100 };
            string none = Cms.Models.Product_2999999.TypeApiIdentifier;
            int id = none == null ? Cms.Models.Product.AttributeIds.Price : old.Id;
            return id == Cms.Models.Product.TypeId ? null : p;
        }
    }
}
`

// tsUse holds Delivery answers of the product type (the shapes of
// docs/api-reference.md §7) typed with the generated types.
const tsUse = `import type { ProductResult, ProductList, CmsModel, Product, Product_2999999Result } from "./models";

export const one: ProductResult = {
  obj: {
    displayName: "Slot sensor",
    displayIcon: 98,
    meta: { id: 3000100, guid: "d81e66f5-1243-4a07-9ff5-d716ea8ff552", typeRef: 3000001, type: "product",
      lastTransaction: 7019, lastModified: "2022-04-28T09:31:17.1901199Z", deleted: false, etag: "QGj_FeQffOIVuSuF8DoNHA" },
    props: {
      attributeName: "Slot sensor",
      vDecimal: 19.5,
      vInteger: { value: -25, unitRef: 3001 },
      vIntegerMulti: [1, { value: 2, unitRef: 3001 }],
      vObjRefMulti: [3000031],
      vObjRef: 3000030,
      vXmlRef_SimpleHtml: { XML: "<div xmlns=\"http://www.w3.org/1999/xhtml\"><p>Hi</p></div>" },
      vBoolean: false,
      vStringLang: "Hallo",
      vStringMulti: ["a", "b"],
      "my-attr.v2": 0.5,
      "2ndValue": true,
      class: "c",
      default: 3,
      "$dollar": "d",
      v: "anything",
    },
  },
  refs: [{ displayName: "Image", meta: { id: 3000030, guid: "g", typeRef: 7, type: "image", lastTransaction: 1,
    deleted: false, etag: "e" }, props: { anything: [1, 2] } }],
};

export const list: ProductList = { skip: 0, count: 1, more: false, objs: [one.obj], refs: [] };

// An object of a type without ApiIdentifier: Delivery's meta.type is "".
export const unnamed: Product_2999999Result = {
  obj: { displayName: "Old", meta: { id: 3000200, guid: "g", typeRef: 2999999, type: "", lastTransaction: 1,
    deleted: false, etag: "e" }, props: { other: 3000100 } },
};
export const unnamedWrong: Product_2999999Result = {
  obj: {
    displayName: "Old",
    // @ts-expect-error meta.type of a type without ApiIdentifier is ""
    meta: { id: 3000200, guid: "g", typeRef: 2999999, type: "product", lastTransaction: 1, deleted: false, etag: "e" },
    props: {},
  },
};

export function price(m: CmsModel): number | undefined {
  if (m.meta.type === "product") {
    const p = m as Product;
    const v = p.props.vDecimal;
    return typeof v === "number" ? v : v?.value;
  }
  return undefined;
}

// Wrong answers must not compile.
export const wrongType: Product["props"] = {
  // @ts-expect-error a Decimal is a number
  vDecimal: "19.5",
};
export const wrongMulti: Product["props"] = {
  // @ts-expect-error a multi-valued reference is always an array
  vObjRefMulti: 3000031,
};
export const wrongXml: Product["props"] = {
  // @ts-expect-error markup is {"XML": …}
  vXmlRef_SimpleHtml: "<div/>",
};
export const wrongMeta: ProductResult = {
  obj: {
    displayName: "x",
    // @ts-expect-error meta.type is the type's ApiIdentifier
    meta: { id: 1, guid: "g", typeRef: 1, type: "image", lastTransaction: 1, deleted: false, etag: "e" },
    props: {},
  },
};
export const unknownProp: Product["props"] = {
  // @ts-expect-error props hold the type's attributes only
  notAnAttribute: 1,
};
`

func TestParseLanguage(t *testing.T) {
	for in, want := range map[string]Language{"": CSharp, "csharp": CSharp, "CSharp": CSharp, "typescript": TypeScript, "TypeScript": TypeScript} {
		if got, err := ParseLanguage(in); err != nil || got != want {
			t.Errorf("ParseLanguage(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"java", "c#", "ts", strings.Repeat("x", 10000)} {
		_, err := ParseLanguage(in)
		if !errors.Is(err, errkind.Invalid) {
			t.Errorf("ParseLanguage(%q): %v, want Invalid", in, err)
		}
		if len(err.Error()) > 200 {
			t.Errorf("ParseLanguage: message of %d bytes", len(err.Error()))
		}
	}
	if _, err := Generate("java", Schema{}); !errors.Is(err, errkind.Invalid) {
		t.Errorf("Generate(java): %v", err)
	}
}
