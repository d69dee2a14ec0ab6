package textmatch_test

import (
	"errors"
	"math"
	"testing"

	"github.com/cmsplatform/cms/pkg/textmatch"
)

func TestSimilarity(t *testing.T) {
	for _, c := range []struct {
		a, b   string
		prefix int
		want   float64
	}{
		{"hello", "helo", 0, 0.75},  // 1 edit over the shorter length 4
		{"abc", "xyz", 0, 0},        // 3 edits over 3
		{"helo", "hello", 0, 0.75},  // symmetric
		{"jello", "hello", 0, 0.8},  // 1 substitution over 5
		{"hjllo", "hello", 1, 0.8},  // the prefix (assumed common) counts in the length: 1 - 1/5
		{"ab", "ab", 2, 1},          // nothing after the prefix
		{"", "", 0, 1},              // empty equals empty
		{"", "a", 0, 0},             // nothing in common
		{"über", "uber", 0, 0.75},   // runes, not bytes
		{"hello", "hello", -1, 1},   // a negative prefix counts as 0
		{"hello", "hellos", 0, 0.8}, // 1 insertion over 5
	} {
		if got := textmatch.Similarity(c.a, c.b, c.prefix); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Similarity(%q, %q, %d) = %v, want %v", c.a, c.b, c.prefix, got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	prefix := textmatch.Completion{Typed: "hel"}
	if prefix.Stem() != "hel" || !prefix.Match("hello") || prefix.Match("helo"[:2]) || prefix.Match("jello") || prefix.Length("hello") != 2 {
		t.Errorf("prefix completion: stem %q, hello %v, jello %v", prefix.Stem(), prefix.Match("hello"), prefix.Match("jello"))
	}
	fuzzy := textmatch.Completion{Typed: "helo", Fuzzy: true, MinSimilarity: textmatch.DefaultMinSimilarity}
	if fuzzy.Stem() != "" || !fuzzy.Match("hello") || !fuzzy.Match("help") || fuzzy.Match("world") {
		t.Errorf("fuzzy completion: hello %v help %v world %v", fuzzy.Match("hello"), fuzzy.Match("help"), fuzzy.Match("world"))
	}
	if fuzzy.Length("hello") != 1 || fuzzy.Length("he") != 0 {
		t.Errorf("fuzzy lengths: %d %d", fuzzy.Length("hello"), fuzzy.Length("he"))
	}
	// Similarity must exceed the minimum: hello~helo is exactly 0.75.
	strict := fuzzy
	strict.MinSimilarity = 0.75
	if strict.Match("hello") {
		t.Error("similarity 0.75 matched with minimum 0.75")
	}
	// The prefix must be common: jello does not start with "h".
	pre := textmatch.Completion{Typed: "hello", Fuzzy: true, MinSimilarity: 0.5, PrefixLength: 1}
	if pre.Stem() != "h" || pre.Match("jello") || !pre.Match("hallo") {
		t.Errorf("prefix length 1: stem %q, jello %v, hallo %v", pre.Stem(), pre.Match("jello"), pre.Match("hallo"))
	}
	long := textmatch.Completion{Typed: "ab", Fuzzy: true, PrefixLength: 9}
	if long.Stem() != "ab" || !long.Match("ab") {
		t.Errorf("prefix longer than the term: stem %q", long.Stem())
	}
}

func TestCheckFuzzy(t *testing.T) {
	for _, ok := range []struct {
		sim    float64
		prefix int
	}{{0, 0}, {0.5, 0}, {0.99, 3}} {
		if err := textmatch.CheckFuzzy(ok.sim, ok.prefix); err != nil {
			t.Errorf("CheckFuzzy(%v, %d) = %v", ok.sim, ok.prefix, err)
		}
	}
	for _, bad := range []struct {
		sim    float64
		prefix int
	}{{1, 0}, {-0.1, 0}, {math.NaN(), 0}, {0.5, -1}} {
		if err := textmatch.CheckFuzzy(bad.sim, bad.prefix); !errors.Is(err, textmatch.ErrInvalid) {
			t.Errorf("CheckFuzzy(%v, %d) = %v, want ErrInvalid", bad.sim, bad.prefix, err)
		}
	}
}
