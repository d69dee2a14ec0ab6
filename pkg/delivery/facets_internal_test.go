package delivery

import (
	"slices"
	"testing"
)

// TestCompareValues: a number field mixes int64 and float64 values, which
// search.CompareValues alone does not order (it compares one kind).
func TestCompareValues(t *testing.T) {
	vs := []any{19.5, int64(20), int64(5), -0.5, int64(-25)}
	slices.SortFunc(vs, compareValues)
	if want := []any{int64(-25), -0.5, int64(5), 19.5, int64(20)}; !slices.Equal(vs, want) {
		t.Fatalf("sorted = %v, want %v", vs, want)
	}
	if compareValues(false, true) >= 0 || compareValues("a", "b") >= 0 || compareValues(int64(2), int64(2)) != 0 {
		t.Fatal("booleans, strings or equal numbers misordered")
	}
}
