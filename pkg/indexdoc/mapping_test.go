package indexdoc

import (
	"math"
	"slices"
	"sort"
	"testing"
	"time"
)

func TestEncodeNumberKeepsOrder(t *testing.T) {
	nums := []float64{math.Inf(-1), -1e300, -2.5, -1, -0.001, 0, 1e-9, 0.5, 1, 2, 19.5, 3000020, 1e300, math.Inf(1)}
	enc := make([]string, len(nums))
	for i, f := range nums {
		enc[i] = EncodeNumber(f)
	}
	if !sort.StringsAreSorted(enc) {
		t.Fatalf("encodings out of order: %v", enc)
	}
}

func TestEncodeDateKeepsOrder(t *testing.T) {
	var enc []string
	for _, s := range []string{"1999-12-31", "2025-06-15T10:30:00Z", "2025-06-15T10:30:00.5Z", "2025-06-15T12:30:00+01:00", "2030-01-01T00:00:00.1234567Z"} {
		tm, ok := ParseDate(s)
		if !ok {
			t.Fatalf("ParseDate(%q) failed", s)
		}
		enc = append(enc, EncodeDate(tm))
	}
	if !sort.StringsAreSorted(enc) {
		t.Fatalf("encodings out of order: %v", enc)
	}
	if _, ok := ParseDate("not a date"); ok {
		t.Fatal("ParseDate accepted garbage")
	}
}

func TestOrderedBoundsEnclose(t *testing.T) {
	lo, hi := OrderedBounds('n', 12, 0, 0)
	for _, f := range []float64{math.Inf(-1), -1, 0, 1e308} {
		term := OrderedTerm('n', 12, 0, 0, EncodeNumber(f))
		if term <= lo || term >= hi {
			t.Fatalf("%q not in (%q, %q)", term, lo, hi)
		}
	}
	for _, other := range []string{OrderedTerm('n', 120, 0, 0, EncodeNumber(1)), OrderedTerm('n', 12, 0, 1, EncodeNumber(1)),
		OrderedTerm('d', 12, 0, 0, EncodeDate(time.Now()))} {
		if other > lo && other < hi {
			t.Fatalf("%q of another key falls in (%q, %q)", other, lo, hi)
		}
	}
}

func TestWordsAndText(t *testing.T) {
	if got := Words("Hello, hello WORLD-wide 42"); !slices.Equal(got, []string{"hello", "world", "wide", "42"}) {
		t.Fatalf("Words = %q", got)
	}
	long := string(make([]byte, 0)) + "é"
	for len(long) < 2*MaxTermBytes {
		long += "é"
	}
	if tr := Truncate("x" + long); len(tr) > MaxTermBytes || tr[len(tr)-1] == 0xc3 {
		t.Fatalf("truncate cut a rune or kept %d bytes", len(tr))
	}
}
