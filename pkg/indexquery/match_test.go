package indexquery

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestMatchStrings(t *testing.T) {
	strs := []string{"test", "testing", "best", "Hello World", "hello there", "the world is big"}
	cases := []struct {
		q    string
		or   bool
		want []int
	}{
		{"test*", false, []int{0, 1}},
		{"?est", false, []int{0, 2}},
		{"hello world", false, []int{3}},
		{"hello world", true, []int{3, 4, 5}},
		{"hello AND NOT world", false, []int{4}},
		{"hello -world", false, []int{4}},
		{`"world is"`, false, []int{5}},
		{`"is world"`, false, []int{}},
		{"(hello OR best) AND -there", false, []int{2, 3}},
		{"name:HELLO", false, []int{3, 4}},
		{"hello || best", false, []int{2, 3, 4}},
		{"+hello world", true, []int{3, 4}},
		{"t*st", false, []int{0}},
	}
	for _, c := range cases {
		got, err := MatchStrings(context.Background(), &c.q, c.or, strs)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("MatchStrings(%q, or=%v) = %v, %v; want %v", c.q, c.or, got, err, c.want)
		}
	}
	for _, q := range []string{"", "(a", "a)", "AND a", `"a`, "**"} {
		if _, err := MatchStrings(context.Background(), &q, false, strs); !errors.Is(err, ErrInvalid) {
			t.Errorf("MatchStrings(%q): err %v, want ErrInvalid", q, err)
		}
	}
	if _, err := MatchStrings(context.Background(), nil, false, strs); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil query: %v", err)
	}
}

func TestWildcardAndSimilarity(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{{"a*c", "abbc", true}, {"a*c", "abcd", false}, {"*", "", true}, {"a?", "ab", true}, {"a?", "a", false}, {"a/b*", "a/bc", true}, {"[a]", "[a]", true}} {
		if wildcardPlain(c.p, c.s) != c.ok {
			t.Errorf("wildcardPlain(%q, %q) != %v", c.p, c.s, c.ok)
		}
	}
}
