package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

func branchRows(parents map[int64]string, deleted ...int64) ([]store.Object, []store.Value) {
	var objs []store.Object
	var vals []store.Value
	for id, p := range parents {
		del := false
		for _, d := range deleted {
			del = del || d == id
		}
		objs = append(objs, store.Object{ID: id, Branch: BranchDefault, TypeID: 40, Deleted: del})
		if p != "" {
			vals = append(vals, store.Value{ObjectID: id, Branch: BranchDefault, AttributeID: AttrBranchParent, JSON: []byte(p)})
		}
	}
	return objs, vals
}

func TestBranchTree(t *testing.T) {
	// 4 ← 10 ← 11 ← 12; 20 → 21 → 20 (cycle); 30 → 99 (no branch);
	// 40 has no parent; 50 is deleted; 4 ignores its own parent value.
	tr := NewBranchTree(branchRows(map[int64]string{4: "10", 10: "4", 11: " 10 ", 12: "11", 20: "21", 21: "20",
		30: "99", 40: "", 50: "4", 51: "50"}, 50))
	chain := func(b int64) string {
		c, err := tr.Chain(b)
		var broken *BrokenChainError
		switch {
		case errors.As(err, &broken):
			return fmt.Sprintf("%v broken at %d cycle=%v", c, broken.At, broken.Cycle)
		case err != nil:
			return err.Error()
		}
		return fmt.Sprint(c)
	}
	for b, want := range map[int64]string{
		4: "[4]", 12: "[12 11 10 4]", 20: "[20 21] broken at 20 cycle=true", 30: "[30] broken at 99 cycle=false",
		40: "[40] broken at 0 cycle=false", 50: "[] broken at 50 cycle=false", 51: "[51] broken at 50 cycle=false",
	} {
		if got := chain(b); got != want {
			t.Errorf("chain %d = %s, want %s", b, got, want)
		}
	}
	if got := fmt.Sprint(tr.Subtree(10)); got != "[10 11 12]" {
		t.Errorf("subtree 10 = %s", got)
	}
	if tr.Has(50) || !tr.Has(51) || tr.Parent(12) != 11 || fmt.Sprint(tr.Children(4)) != "[10]" {
		t.Errorf("tree %+v", tr)
	}
	if got := fmt.Sprint(tr.Branches()); got != "[4 10 11 12 20 21 30 40 51]" {
		t.Errorf("branches %s", got)
	}
}

func TestChainInheritance(t *testing.T) {
	c := NewChain([]int64{12, 10, 4})
	objs := c.EffectiveObjects([]store.Object{{ID: 1, Branch: 4}, {ID: 1, Branch: 10}, {ID: 2, Branch: 4}})
	if objs[1].Branch != 10 || objs[2].Branch != 4 {
		t.Fatalf("effective objects %v", objs)
	}
	v := func(obj, attr, lang, branch int64, j string) store.Value {
		return store.Value{ObjectID: obj, AttributeID: attr, Language: lang, Branch: branch, JSON: []byte(j)}
	}
	rows := []store.Value{v(1, 1000, 201, 4, `"a"`), v(1, 1000, 201, 12, `"c"`), v(1, 1000, 202, 4, `"d"`),
		v(1, 1000, 202, 10, `null`), v(1, 1001, 0, 4, `"x"`), v(1, 1001, 0, 4, `"y"`)}
	var got []string
	c.EachValueGroup(rows, func(group []store.Value, winner int64) {
		for _, r := range group {
			if r.Branch == winner && !IsNull(r.JSON) {
				got = append(got, string(r.JSON))
			}
		}
		got = append(got, fmt.Sprint(winner))
	})
	if fmt.Sprint(got) != `["c" 12 10 "x" "y" 4]` {
		t.Fatalf("groups %v", got)
	}
}

func TestLanguageChain(t *testing.T) {
	fb := map[int64]int64{201: 0, 202: 201, 203: 204, 204: 203}
	state := func(id int64) (bool, int64, error) { f, ok := fb[id]; return ok, f, nil }
	for lang, want := range map[int64]string{0: "[0]", 201: "[201 0]", 202: "[202 201 0]", 203: "[203 204 0]", 999: "[999 0]"} {
		if got, _ := LanguageChain(lang, state); fmt.Sprint(got) != want {
			t.Errorf("chain %d = %v, want %s", lang, got, want)
		}
	}
	deep := func(id int64) (bool, int64, error) { return true, id + 1, nil }
	if got, _ := LanguageChain(1, deep); len(got) != MaxFallbackDepth+1 || got[MaxFallbackDepth] != 0 {
		t.Errorf("deep chain %v", got)
	}
}

func TestDisplayName(t *testing.T) {
	values := map[int64]string{AttrName: "Object name", 7000: "Title"}
	pick := func(attr int64) (string, bool) { v, ok := values[attr]; return v, ok }
	for nameAttr, want := range map[int64]string{0: "Object name", AttrName: "Object name", 7000: "Title", 7001: "Object name"} {
		if got, _ := DisplayName(nameAttr, pick); got != want {
			t.Errorf("nameAttr %d: %q, want %q", nameAttr, got, want)
		}
	}
	if _, ok := DisplayName(7000, func(int64) (string, bool) { return "", false }); ok {
		t.Error("a name without values")
	}
	if id, ok := TypeDisplayNameAttribute(json.RawMessage(" 7000 ")); !ok || id != 7000 {
		t.Errorf("5005 value: %d %v", id, ok)
	}
	for raw, want := range map[string]string{`"x"`: "x", `19.50`: "19.5", `true`: "true", `null`: "", `{}`: ""} {
		if got := DisplayString(json.RawMessage(raw)); got != want {
			t.Errorf("DisplayString(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestDataTypesAndSecrets(t *testing.T) {
	for dt, want := range map[string][3]bool{"ObjRef": {true, true, false}, "BinRef.Icon": {true, true, false},
		"Integer": {false, true, false}, "String": {false, false, false}, "XmlRef.SimpleHtml": {false, false, true}} {
		if got := [3]bool{IsReference(dt), IsNumeric(dt), IsMarkup(dt)}; got != want {
			t.Errorf("%s: %v, want %v", dt, got, want)
		}
	}
	if !SecretAttribute(AttrUserPassword) || SecretAttribute(AttrName) {
		t.Error("secret attributes")
	}
}

// The variant chain keeps the requested order without 0 and repeats and
// ends with 0; Fallback tries variants outer, languages inner.
func TestVariantChainAndFallback(t *testing.T) {
	if got := VariantChain([]int64{7, 0, 5, 7}); !slices.Equal(got, []int64{7, 5, 0}) {
		t.Errorf("VariantChain = %v", got)
	}
	var tried [][2]int64
	ok := Fallback([]int64{7, 0}, []int64{202, 201, 0}, func(va, l int64) bool {
		tried = append(tried, [2]int64{va, l})
		return va == 0 && l == 201
	})
	want := [][2]int64{{7, 202}, {7, 201}, {7, 0}, {0, 202}, {0, 201}}
	if !ok || !slices.Equal(tried, want) {
		t.Errorf("Fallback tried %v (%v), want %v", tried, ok, want)
	}
}

// DisplayString reads plain strings without encoding/json; the answer is
// encoding/json's for every input.
func TestDisplayStringMatchesJSON(t *testing.T) {
	for _, in := range []string{`"a"`, `""`, `"héllo 中"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"\xff\"", "\"a\xc3\"", `"tab	x"`,
		`"<&>"`, `12`, `1.50`, `-0`, `1e3`, `true`, `false`, `null`, `{"XML":"x"}`, `[1]`, `"`, `"a"b"`, ` "a"`} {
		var want string
		var v any
		if json.Unmarshal([]byte(in), &v) == nil {
			switch x := v.(type) {
			case string:
				want = x
			case float64:
				want = strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				want = strconv.FormatBool(x)
			}
		}
		if got := DisplayString(json.RawMessage(in)); got != want {
			t.Errorf("DisplayString(%q) = %q, want %q", in, got, want)
		}
	}
}
