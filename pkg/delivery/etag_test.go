package delivery

import (
	"encoding/json"

	"testing"
	"time"
)

func etagSample() Object {
	icon := int64(7)
	return Object{
		DisplayName: "Home", DisplayIcon: &icon,
		Meta: Meta{ID: 2100001, GUID: "0b4c3c6e", APIIdentifier: "home", TypeRef: 2100003, Type: "webPage",
			LastTransaction: 120, LastModified: time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC)},
		Props: map[string]any{"title": "Hi", "count": int64(3), "price": 1.5, "on": true,
			"links": []any{int64(1), int64(2)}, "body": map[string]any{"XML": "<p/>"}},
		Reverse: map[string][]int64{"links": {5, 6}},
	}
}

// The ETag has no per-process seed: this value is what every replica and
// every build computes for etagSample.
func TestETagIsStable(t *testing.T) {
	const want = "A3Xe-6Yj-kPKi84_bS_tbA"
	o := etagSample()
	if got := etagOf(o); got != want {
		t.Fatalf("etagOf(sample) = %s, want %s", got, want)
	}
	o.Meta.ETag = "something else"
	if got := etagOf(o); got != want {
		t.Fatalf("etagOf depends on Meta.ETag: %s", got)
	}
}

func TestETagCoversEveryField(t *testing.T) {
	mutations := map[string]func(o *Object){
		"displayName":      func(o *Object) { o.DisplayName = "Home!" },
		"no icon":          func(o *Object) { o.DisplayIcon = nil },
		"icon":             func(o *Object) { i := int64(8); o.DisplayIcon = &i },
		"id":               func(o *Object) { o.Meta.ID++ },
		"guid":             func(o *Object) { o.Meta.GUID = "x" },
		"apiIdentifier":    func(o *Object) { o.Meta.APIIdentifier = "" },
		"typeRef":          func(o *Object) { o.Meta.TypeRef++ },
		"type":             func(o *Object) { o.Meta.Type = "root" },
		"lastTransaction":  func(o *Object) { o.Meta.LastTransaction++ },
		"lastModified":     func(o *Object) { o.Meta.LastModified = o.Meta.LastModified.Add(100) },
		"no lastModified":  func(o *Object) { o.Meta.LastModified = time.Time{} },
		"deleted":          func(o *Object) { o.Meta.Deleted = true },
		"prop string":      func(o *Object) { o.Props["title"] = "Ho" },
		"prop int":         func(o *Object) { o.Props["count"] = int64(4) },
		"prop float":       func(o *Object) { o.Props["price"] = 1.25 },
		"prop bool":        func(o *Object) { o.Props["on"] = false },
		"prop list":        func(o *Object) { o.Props["links"] = []any{int64(2), int64(1)} },
		"prop list longer": func(o *Object) { o.Props["links"] = []any{int64(1), int64(2), int64(3)} },
		"prop xml":         func(o *Object) { o.Props["body"] = map[string]any{"XML": "<p></p>"} },
		"prop added":       func(o *Object) { o.Props["new"] = "x" },
		"prop removed":     func(o *Object) { delete(o.Props, "on") },
		"prop renamed":     func(o *Object) { o.Props["titl"] = o.Props["title"]; delete(o.Props, "title") },
		"prop odd type":    func(o *Object) { o.Props["title"] = json.Number("1") },
		"no reverse":       func(o *Object) { o.Reverse = nil },
		"empty reverse":    func(o *Object) { o.Reverse = map[string][]int64{} },
		"reverse ids":      func(o *Object) { o.Reverse["links"] = []int64{5} },
		"reverse attr":     func(o *Object) { o.Reverse = map[string][]int64{"link": {5, 6}} },
	}
	base := etagOf(etagSample())
	seen := map[string]string{base: "base"}
	for name, mutate := range mutations {
		o := etagSample()
		mutate(&o)
		tag := etagOf(o)
		if len(tag) != 22 {
			t.Errorf("%s: etag %q is not 22 characters", name, tag)
		}
		if other, dup := seen[tag]; dup {
			t.Errorf("%s: same etag as %s", name, other)
		}
		seen[tag] = name
	}
}

// Neighbouring strings and values cannot run into each other.
func TestETagIsUnambiguous(t *testing.T) {
	pairs := [][2]map[string]any{
		{{"a": "bc"}, {"ab": "c"}},
		{{"a": []any{"b", "c"}}, {"a": []any{"bc"}}},
		{{"a": []any{[]any{"b"}, "c"}}, {"a": []any{[]any{"b", "c"}}}},
		{{"a": int64(1)}, {"a": "1"}},
		{{"a": nil}, {}},
	}
	for _, p := range pairs {
		a, b := etagSample(), etagSample()
		a.Props, b.Props = p[0], p[1]
		if etagOf(a) == etagOf(b) {
			t.Errorf("%v and %v share an etag", p[0], p[1])
		}
	}
}

func BenchmarkETag(b *testing.B) {
	o := etagSample()
	links := make([]any, 60)
	for i := range links {
		links[i] = int64(2200000 + i)
	}
	o.Props["links"] = links
	for b.Loop() {
		_ = etagOf(o)
	}
}
