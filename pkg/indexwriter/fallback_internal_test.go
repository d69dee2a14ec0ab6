package indexwriter

import (
	"github.com/cmsplatform/cms/pkg/store"

	"fmt"
	"testing"
)

func TestFallbackChains(t *testing.T) {
	live := map[int64]bool{1: true, 2: true, 3: true, 4: true, 5: false}
	fb := map[int64]int64{1: 2, 2: 3, 3: 1, 4: 5, 5: 1}
	deep := map[int64]bool{}
	deepFB := map[int64]int64{}
	for i := int64(100); i < 140; i++ {
		deep[i], deepFB[i] = true, i+1
	}
	for _, c := range []struct {
		name string
		lang int64
		live map[int64]bool
		fb   map[int64]int64
		want string
	}{
		{"cycle cut", 1, live, fb, "[1 2 3 0]"},
		{"not live ends the chain", 4, live, fb, "[4 5 0]"},
		{"unknown language", 9, live, fb, "[9 0]"},
		{"no fallback", 3, live, map[int64]int64{}, "[3 0]"},
		{"depth capped", 100, deep, deepFB, fmt.Sprint(append(seq(100, 100+MaxFallbackDepth), 0))},
	} {
		if got := fmt.Sprint(fallbackChains([]int64{c.lang}, c.live, c.fb)[c.lang]); got != c.want {
			t.Errorf("%s: chain of %d = %s, want %s", c.name, c.lang, got, c.want)
		}
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestDisplayNames(t *testing.T) {
	chains := langChains{201: {201, 0}, 202: {202, 201, 0}, 203: {203, 0}}
	val := func(attr, lang, variant int64, j string) store.Value {
		return store.Value{AttributeID: attr, Language: lang, Variant: variant, JSON: []byte(j)}
	}
	o := &resolved{values: []store.Value{val(1000, 0, 0, `"Neutral"`), val(1000, 201, 0, `"Home"`), val(1000, 201, 3, `"Variant"`)}}
	n := namesOf(o, 0, chains)
	if fmt.Sprint(n.shown) != "map[201:Home 202:Home 203:Neutral]" || fmt.Sprint(n.own) != "map[0:Neutral 201:Home]" {
		t.Errorf("names = %+v", n)
	}
	o = &resolved{values: []store.Value{val(1000, 202, 0, `"Start"`)}}
	if n := namesOf(o, 0, chains); fmt.Sprint(n.shown) != "map[202:Start]" {
		t.Errorf("names = %+v", n)
	}
	// A type naming attribute 7000 (5005): its values win along the whole
	// chain, attribute 1000 stands in where it has none.
	o = &resolved{values: []store.Value{val(1000, 201, 0, `"Object name"`), val(1000, 203, 0, `"Nom"`),
		val(7000, 0, 0, `42`), val(7000, 201, 0, `"Title"`)}}
	n = namesOf(o, 7000, langChains{201: {201, 0}, 202: {202, 201, 0}, 203: {203, 0}, 204: {204}})
	if fmt.Sprint(n.shown) != "map[201:Title 202:Title 203:42]" || fmt.Sprint(n.own) != "map[0:42 201:Title 203:Nom]" {
		t.Errorf("names with 5005 = %+v", n)
	}
}
