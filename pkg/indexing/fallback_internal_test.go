package indexing

import (
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
	got := displayNames(chains, map[int64]string{201: "Home", 0: "Neutral"})
	if fmt.Sprint(got) != "map[201:Home 202:Home 203:Neutral]" {
		t.Errorf("displayNames = %v", got)
	}
	if got := displayNames(chains, map[int64]string{202: "Start"}); fmt.Sprint(got) != "map[202:Start]" {
		t.Errorf("displayNames = %v", got)
	}
}
