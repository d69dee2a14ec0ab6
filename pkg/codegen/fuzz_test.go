package codegen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The generator's output must compile for any schema. FuzzGenerate checks
// that cheaply (checkCSharp, checkTypeScript: every line of the output
// belongs to the small grammar the generator writes, with valid and unique
// names); TestCompile compiles a seeded batch of random schemas with the
// real compilers, once per compiler.

// pieces are the fragments random identifiers and texts are made of:
// keywords of both languages, names of generated members and helpers,
// digits, separators, comment terminators, line terminators of either
// language, XML, quotes, non-ASCII.
var pieces = []string{"class", "default", "constructor", "toString", "__proto__", "Id", "TypeId", "AttributeIds",
	"Cms", "Object", "Props", "List", "Result", "System", "DateTime", "product", "Product", "2", "9x", ".", "-", "_",
	"$", "*/", "/*", "///", "</summary>", "<", "&", "\"", "\\", "'", "`", "${x}", "\r\n", "\n", "\r", "\u2028",
	"\u2029", "\u0085", "\x00", "\u202e", "\ufeff", "ä", "日本", "😀", " ", "\t", "\xff", "a", "B", "value"}

// randomText joins n random pieces.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomSchema builds a schema from r: up to 5 types with up to 8
// attributes each, ids drawn from small ranges so that they repeat.
func randomSchema(r *rand.Rand) Schema {
	var s Schema
	s.Branch = r.Int64N(100)
	nt := 1 + r.IntN(5)
	for range nt {
		t := Type{ID: 3000000 + r.Int64N(8), APIIdentifier: randomText(r, 1+r.IntN(3)), Name: randomText(r, r.IntN(3)),
			Description: randomText(r, r.IntN(6))}
		if r.IntN(4) == 0 { // no ApiIdentifier: named from Name
			t.APIIdentifier = ""
		}
		for range r.IntN(9) {
			t.Attributes = append(t.Attributes, Attribute{ID: 5000 + r.Int64N(12), APIIdentifier: randomText(r, 1+r.IntN(3)),
				Name: randomText(r, r.IntN(3)), Description: randomText(r, r.IntN(6)),
				DataType: dataTypes[r.IntN(len(dataTypes))], Multiple: r.IntN(2) == 0, LanguageDependent: r.IntN(2) == 0,
				HasUnit: r.IntN(4) == 0, RefTypes: []string{randomText(r, 2)}, RefTypeIDs: []int64{3000000 + r.Int64N(8)}})
		}
		s.Named = append(s.Named, t)
		if r.IntN(4) > 0 {
			s.Emit = append(s.Emit, t.ID)
		}
	}
	return s
}

func FuzzGenerate(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(42), uint64(7))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		s := randomSchema(rand.New(rand.NewPCG(a, b)))
		for _, lang := range Languages {
			src, err := Generate(lang, s)
			if err != nil {
				t.Fatal(err)
			}
			check := map[Language]func(string) error{CSharp: checkCSharp, TypeScript: checkTypeScript}[lang]
			if err := check(src); err != nil {
				t.Fatalf("%s: %v\n%s", lang, err, src)
			}
		}
	})
}

var (
	csID   = `[A-Za-z_][A-Za-z0-9_]*`
	csLine = []*regexp.Regexp{
		regexp.MustCompile(`^$`), regexp.MustCompile(`^[{}]$`), regexp.MustCompile(`^///( .*)?$`),
		regexp.MustCompile(`^// .*$`), regexp.MustCompile(`^namespace Cms\.Models$`),
		regexp.MustCompile(`^public partial class (` + csID + `)$`),
		regexp.MustCompile(`^public static class AttributeIds$`),
		regexp.MustCompile(`^public const int (` + csID + `) = -?[0-9]+;$`),
		regexp.MustCompile(`^public const string TypeApiIdentifier = (null|"([^"\\]|\\["\\]|\\u[0-9a-f]{4}|\\U[0-9a-f]{8})*");$`),
		regexp.MustCompile(`^public [A-Za-z:.<>, ?]+ (` + csID + `) \{ get; set; \}$`),
	}
	tsLine = []*regexp.Regexp{
		regexp.MustCompile(`^$`), regexp.MustCompile(`^\}$`), regexp.MustCompile(`^/\*\*$`), regexp.MustCompile(`^\*/$`),
		regexp.MustCompile(`^\*( .*)?$`), regexp.MustCompile(`^/\*\* .* \*/$`), regexp.MustCompile(`^// .*$`),
		regexp.MustCompile(`^export interface (` + csID + `)Props \{$`),
		regexp.MustCompile(`^export type (` + csID + `) = CmsObject<(".*"), ` + csID + `Props>;$`),
		regexp.MustCompile(`^export type ` + csID + `(Result|List) = Cms(Result|List)<` + csID + `>;$`),
		regexp.MustCompile(`^export type CmsModel =( never;)?$`), regexp.MustCompile(`^\| ` + csID + `;?$`),
		regexp.MustCompile(`^([A-Za-z_$][A-Za-z0-9_$]*|".*")\?: [A-Za-z<>()|\[\]" ]+;$`),
	}
)

// checkLines checks that every line (trimmed) matches one of the
// patterns, that no line terminator either language knows is inside one,
// and that the names of the first group of each kind are unique per
// block (a "{" … "}" at the top level for members).
func checkLines(src string, pats []*regexp.Regexp) error {
	if i := strings.IndexAny(src, "\r\u0085\u2028\u2029\x00"); i >= 0 {
		return fmt.Errorf("line terminator or NUL at %d", i)
	}
	for n, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		ok := false
		for _, p := range pats {
			if p.MatchString(l) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("line %d outside the grammar: %q", n+1, l)
		}
	}
	return nil
}

func checkCSharp(src string) error {
	if err := checkLines(src, csLine); err != nil {
		return err
	}
	classes := map[string]bool{}
	var members map[string]bool
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if m := csLine[5].FindStringSubmatch(l); m != nil {
			if classes[m[1]] {
				return fmt.Errorf("class %s twice", m[1])
			}
			classes[m[1]], members = true, map[string]bool{m[1]: true}
		}
		if m := csLine[9].FindStringSubmatch(l); m != nil {
			if members[m[1]] {
				return fmt.Errorf("member %s twice", m[1])
			}
			members[m[1]] = true
		}
	}
	return nil
}

func checkTypeScript(src string) error {
	_, body, ok := strings.Cut(src, tsPrelude)
	if !ok {
		return fmt.Errorf("no prelude")
	}
	if err := checkLines(body, tsLine); err != nil {
		return err
	}
	types := map[string]bool{}
	var keys map[string]bool
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		comment := strings.HasPrefix(l, "/**") || strings.HasPrefix(l, "*")
		if comment && (strings.Count(l, "*/") > 1 || (strings.HasPrefix(l, "*") && l != "*/" && strings.Contains(l, "*/"))) {
			return fmt.Errorf("a comment ends early: %q", l)
		}
		if m := tsLine[7].FindStringSubmatch(l); m != nil {
			for _, n := range []string{m[1], m[1] + "Props", m[1] + "Result", m[1] + "List"} {
				if types[n] {
					return fmt.Errorf("type %s twice", n)
				}
				types[n] = true
			}
			keys = map[string]bool{}
		}
		if m := tsLine[8].FindStringSubmatch(l); m != nil {
			var s string
			if err := json.Unmarshal([]byte(m[2]), &s); err != nil {
				return fmt.Errorf("meta.type literal %s: %v", m[2], err)
			}
		}
		if m := tsLine[12].FindStringSubmatch(l); m != nil {
			key := m[1]
			if strings.HasPrefix(key, `"`) {
				if err := json.Unmarshal([]byte(key), &key); err != nil {
					return fmt.Errorf("key %s: %v", m[1], err)
				}
			}
			if keys[key] {
				return fmt.Errorf("key %q twice", key)
			}
			keys[key] = true
		}
	}
	for _, h := range tsReserved {
		if types[h] {
			return fmt.Errorf("type named like the helper %s", h)
		}
	}
	return nil
}

// TestCheckersReject: the cheap checks are not vacuous.
func TestCheckersReject(t *testing.T) {
	s := awkwardSchema()
	cs, _ := Generate(CSharp, s)
	ts, _ := Generate(TypeScript, s)
	if err := checkCSharp(cs); err != nil {
		t.Fatal(err)
	}
	if err := checkTypeScript(ts); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"comment end":  strings.Replace(cs, "/// <summary>", "/// <summary>\u2028x", 1),
		"bad name":     strings.Replace(cs, "public partial class Product\n", "public partial class 2Product\n", 1),
		"two classes":  strings.Replace(cs, "class Product_3000002\n", "class Product\n", 1),
		"two members":  strings.Replace(cs, "public string VTextRef {", "public string VString {", 1),
		"stray code":   cs + "int x;\n",
		"ts injection": strings.Replace(ts, " * A product.", " * A product. */ export const x = 1; /*", 1),
		"ts two keys":  strings.Replace(ts, "  vTextRef?:", "  vString?:", 1),
	} {
		check := checkCSharp
		if strings.HasPrefix(name, "ts") {
			check = checkTypeScript
		}
		if check(bad) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
