package search_test

import (
	"encoding/json"
	"errors"
	"reflect"
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
