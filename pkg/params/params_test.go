package params

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func p32(v int32) *int32 { return &v }

func TestRanges(t *testing.T) {
	cases := []struct {
		name string
		got  func() (int, error)
		want int
		err  string
	}{
		{"take absent", func() (int, error) { return Take("take", nil, 100, 1000) }, 100, ""},
		{"take 1", func() (int, error) { return Take("take", p32(1), 100, 1000) }, 1, ""},
		{"take max", func() (int, error) { return Take("take", p32(1000), 100, 1000) }, 1000, ""},
		{"take 0", func() (int, error) { return Take("take", p32(0), 100, 1000) }, 0, "take must be between 1 and 1000, got 0"},
		{"take -1", func() (int, error) { return Take("take", p32(-1), 100, 1000) }, 0, "take must be between 1 and 1000, got -1"},
		{"take 1001", func() (int, error) { return Take("take", p32(1001), 100, 1000) }, 0, "take must be between 1 and 1000, got 1001"},
		{"skip 0", func() (int, error) { return Skip("skip", 0, 0) }, 0, ""},
		{"skip -5", func() (int, error) { return Skip("skip", -5, 0) }, 0, "skip must be 0 or more, got -5"},
		{"skip beyond", func() (int, error) { return Skip("page.skip", 10, 9) }, 0, "page.skip must be between 0 and 9, got 10"},
		{"depth absent", func() (int, error) { return Depth("resolveDepth", nil, MaxDepth, MaxDepth) }, MaxDepth, ""},
		{"depth 0", func() (int, error) { return Depth("resolveDepth", p32(0), MaxDepth, MaxDepth) }, 0, ""},
		{"depth max+1", func() (int, error) { return Depth("resolveDepth", p32(MaxDepth+1), MaxDepth, MaxDepth) }, 0, "resolveDepth must be between 0 and 100, got 101"},
		{"depth -1", func() (int, error) { return Depth("resolveReverseDepth", p32(-1), MaxDepth, MaxDepth) }, 0, "resolveReverseDepth must be between 0 and 100, got -1"},
	}
	for _, c := range cases {
		got, err := c.got()
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s = %d, %v; want %d", c.name, got, err, c.want)
		case c.err != "" && (err == nil || err.Error() != c.err || !errors.Is(err, ErrInvalid)):
			t.Errorf("%s: error %v, want %q wrapping ErrInvalid", c.name, err, c.err)
		}
	}
	if err := Count("sort", 9, MaxSortKeys); err == nil || err.Error() != "sort takes at most 8 entries, got 9" {
		t.Errorf("Count: %v", err)
	}
	if err := Count("sort", 8, MaxSortKeys); err != nil {
		t.Errorf("Count 8: %v", err)
	}
}

func TestID(t *testing.T) {
	for s, want := range map[string]int64{"4": 4, "0": 0, "2147483647": 2147483647, "0042": 42} {
		if id, ok := ID(s); !ok || id != want {
			t.Errorf("ID(%q) = %d, %v", s, id, ok)
		}
	}
	for _, s := range []string{"", "+4", " 4", "4 ", "-4", "4a", "2147483648", "99999999999", "４"} {
		if id, ok := ID(s); ok {
			t.Errorf("ID(%q) = %d, accepted", s, id)
		}
	}
}

func TestPlain(t *testing.T) {
	cases := map[string]string{
		`parsing field "take": strconv.ParseInt: parsing "abc": invalid syntax`:                        `parameter take: "abc" is not a whole number (digits, optionally a leading minus)`,
		`parsing field "deleted": strconv.ParseBool: parsing "maybe": invalid syntax`:                  `parameter deleted: "maybe" is not true or false`,
		`parsing field "take": strconv.ParseInt: parsing "99999999999": value out of range`:            `parameter take: "99999999999" is out of range for a whole number (digits, optionally a leading minus)`,
		`type mismatch, parameter: comment_id, error: strconv.ParseInt: parsing "abc": invalid syntax`: `parameter commentId: "abc" is not a whole number (digits, optionally a leading minus)`,
		`parsing field "x": something else`:                                                            `parameter x: the value cannot be read`,
	}
	for in, want := range cases {
		got, ok := Plain(in)
		if !ok || got != want {
			t.Errorf("Plain(%q) = %q, %v; want %q", in, got, ok, want)
		}
		if strings.Contains(got, "strconv") {
			t.Errorf("Plain(%q) still names Go internals", in)
		}
	}
	if got, ok := Plain("take must be between 1 and 1000, got 0"); ok || got != "take must be between 1 and 1000, got 0" {
		t.Errorf("Plain rewrote a plain message: %q", got)
	}
}

func TestPathIdentifier(t *testing.T) {
	for _, v := range []string{"", "4", "branchDefault", "a1b2c3d4-0000-4000-8000-00000000000a"} {
		if err := PathIdentifier("branch", v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"+4", " 4", "4 ", "-4", "\t4"} {
		err := PathIdentifier("comment_id", v)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "parameter commentId") {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func TestBranchAlias(t *testing.T) {
	for ident, want := range map[string]int64{"draft": DefaultBranch, "Draft": 0, "drafts": 0, "4": 0, "": 0} {
		got, ok := BranchAlias(ident)
		if got != want || ok != (want != 0) {
			t.Errorf("BranchAlias(%q) = %d, %v; want %d", ident, got, ok, want)
		}
	}
}

func TestWait(t *testing.T) {
	for in, want := range map[string]time.Duration{"250": 250 * time.Millisecond, " 2s ": 2 * time.Second, "0": 0, "1m30s": 90 * time.Second} {
		if got, err := Wait("w", in); err != nil || got != want {
			t.Errorf("Wait(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"abc", "-5", "-5s", "1e3", "99999999999999999999", ""} {
		if _, err := Wait("w", in); err == nil || !strings.Contains(err.Error(), "w must be") {
			t.Errorf("Wait(%q) = %v, want an error naming w", in, err)
		}
	}
}
