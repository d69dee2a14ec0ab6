package search_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

var m = search.Mapping{Fields: map[string]search.Kind{
	"k": search.Keyword, "n": search.Long, "d": search.Double, "b": search.Bool, "t": search.Date,
}}

func TestNormalizeRoundTrip(t *testing.T) {
	in := search.Document{ID: "x", Version: 1, Fields: map[string]any{
		"k": []string{"a", "b"}, "n": uint8(7), "d": json.Number("2.5"), "b": true,
		"t": "2024-03-01T10:00:00.123456+02:00",
	}}
	got, err := m.Normalize(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"k": []any{"a", "b"}, "n": int64(7), "d": 2.5, "b": true,
		"t": time.Date(2024, 3, 1, 8, 0, 0, 123000000, time.UTC)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Normalize = %#v\nwant %#v", got, want)
	}
	raw, err := search.EncodeSource(got)
	if err != nil {
		t.Fatal(err)
	}
	back, err := m.DecodeSource(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("DecodeSource = %#v\nwant %#v", back, want)
	}
}

func TestNormalizeRejects(t *testing.T) {
	for _, f := range []map[string]any{
		{"x": "unmapped"}, {"n": 1.5}, {"n": uint64(1 << 63)}, {"d": "1"}, {"b": 1},
		{"t": "2024-03-01"}, {"k": 3}, {"k": []any{"a", 1}},
	} {
		_, err := m.Normalize(search.Document{ID: "x", Version: 1, Fields: f})
		if !errors.Is(err, search.ErrInvalidDocument) {
			t.Errorf("Normalize(%v) err = %v, want ErrInvalidDocument", f, err)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, c := range []struct {
		k search.Kind
		v any
	}{{search.Long, int64(-42)}, {search.Double, 0.1}, {search.Bool, false}, {search.Keyword, "x y"},
		{search.Date, time.UnixMilli(1700000000123).UTC()}} {
		got, err := search.ParseKey(c.k, search.FormatKey(c.v))
		if err != nil || !reflect.DeepEqual(got, c.v) {
			t.Errorf("ParseKey(FormatKey(%v)) = %v, %v", c.v, got, err)
		}
	}
	bs := []search.Bucket{{Key: int64(10), Count: 1}, {Key: int64(9), Count: 1}, {Key: int64(1), Count: 2}}
	search.SortBuckets(bs)
	if bs[0].Key != int64(1) || bs[1].Key != int64(9) || bs[2].Key != int64(10) {
		t.Errorf("SortBuckets = %v, want 1 (count 2), then 9, 10 numerically", bs)
	}
}

func TestInMemorySortHelpers(t *testing.T) {
	field := []any{"1:0:0=b", "2:0:0=x", "1:0:0=a", "1:0:01=no", 7}
	if got := search.KeyedValues(field, "1:0:0="); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Fatalf("KeyedValues = %v", got)
	}
	if got := search.KeyedValues("1:0:0=z", "1:0:0="); !reflect.DeepEqual(got, []string{"z"}) {
		t.Fatalf("KeyedValues of a single value = %v", got)
	}
	if got := search.KeyedValues(nil, "x"); got != nil {
		t.Fatalf("KeyedValues(nil) = %v", got)
	}
	nums := []any{3.5, -1.0, 10.0}
	if search.SortValue(nums, false) != -1.0 || search.SortValue(nums, true) != 10.0 || search.SortValue(nil, false) != nil {
		t.Fatal("SortValue: want the smallest ascending, the largest descending, nil for none")
	}
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	type item struct {
		id   int64
		keys []any
	}
	items := []item{
		{1, []any{nil, "b"}}, {2, []any{2.0, "a"}}, {3, []any{10.0, "a"}}, {4, []any{2.0, "a"}},
		{5, []any{nil, nil}}, {6, []any{2.0, nil}},
	}
	sortIDs := func(desc []bool) []int64 {
		its := slices.Clone(items)
		search.SortByKeys(its, func(i item) []any { return i.keys }, desc,
			func(a, b item) int { return cmp.Compare(a.id, b.id) })
		var out []int64
		for _, i := range its {
			out = append(out, i.id)
		}
		return out
	}
	// Numbers numerically (2 < 10, not "10" < "2"), missing last in both
	// directions, ties by the second key then id.
	if got := sortIDs([]bool{false, false}); !reflect.DeepEqual(got, []int64{2, 4, 6, 3, 1, 5}) {
		t.Fatalf("asc = %v", got)
	}
	if got := sortIDs([]bool{true, true}); !reflect.DeepEqual(got, []int64{3, 2, 4, 6, 1, 5}) {
		t.Fatalf("desc = %v", got)
	}
	if search.CompareSortValues(day(1), day(2), false) >= 0 || search.CompareSortValues(day(1), nil, true) >= 0 ||
		search.CompareSortValues(nil, day(1), true) <= 0 || search.CompareSortValues(true, false, false) <= 0 {
		t.Fatal("CompareSortValues: dates chronological, missing last, false < true")
	}
}
