package indexdoc

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestDecodeSourceFastMatchesJSON: whatever the fast decoder accepts, it
// decodes exactly as json.Unmarshal does, over sources as the indexer
// writes them (json.Marshal of varied Sources: strings with quotes,
// markup, control characters, invalid UTF-8 and non-ASCII, values of every
// scalar kind and nested ones) and over hand-written documents (spaces,
// unknown, repeated or upper-case keys, nulls, fractions where integers
// belong, trailing bytes, truncations); and that it accepts the common
// ones, so the fast path is the one taken.
func TestDecodeSourceFastMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	texts := []string{"", "Article 00042", "Héllo wörld ✓", `say "hi"`, `a\b`, "<b>&amp;</b>", "tab\tnew\nline", "\x01", "bad \xff utf-8",
		"GRID Industries", "日本語", "\u2028"}
	pick := func() string { return texts[r.IntN(len(texts))] }
	raws := func() json.RawMessage {
		switch r.IntN(9) {
		case 0:
			b, _ := json.Marshal(pick())
			return b
		case 1:
			return json.RawMessage(`12.34`)
		case 2:
			return json.RawMessage(`-7`)
		case 3:
			return json.RawMessage(`true`)
		case 4:
			return json.RawMessage(`1e-3`)
		case 5:
			return json.RawMessage(`{"XML":"<p/>"}`)
		case 6:
			return json.RawMessage(`[1,2]`)
		case 7:
			return json.RawMessage(`"\u00e9\"\\\/"`)
		}
		return json.RawMessage(`9223372036854775807`)
	}
	dts := []string{"String", "ObjRef", "Decimal", "XmlRef.SimpleHtml", "", "Custom.Type", "\xfe"}
	fast, all := 0, 0
	check := func(b []byte) {
		t.Helper()
		all++
		var want Source
		werr := json.Unmarshal(b, &want)
		got, ok := decodeSourceFast(append([]byte(nil), b...))
		if !ok {
			return
		}
		fast++
		if werr != nil {
			t.Fatalf("fast decoder accepts %s, json.Unmarshal refuses it: %v", b, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nfast %#v\njson %#v", b, got, want)
		}
		for _, v := range got.Values {
			if cap(v.Value) != len(v.Value) {
				t.Fatalf("%s: a value's capacity reaches past it", b)
			}
		}
	}
	common := 0
	for i := range 3000 {
		src := Source{ID: r.Int64N(1 << 40), GUID: "4f0c2b5e-0d7a-4a55-9b51-" + strings.Repeat("a", r.IntN(3)),
			TypeRef: r.Int64N(100000) - 5, LastTransaction: r.Int64(), Deleted: r.IntN(2) == 0}
		if i%3 == 0 {
			src.APIIdentifier = pick()
		}
		if i%4 != 0 {
			src.Modified = time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC()
		}
		if i%5 == 1 {
			src.Modified = src.Modified.In(time.FixedZone("x", 3600))
		}
		for range r.IntN(12) {
			v := SourceValue{Attr: r.Int64N(20000), Value: raws()}
			if r.IntN(2) == 0 {
				v.Lang, v.Variant, v.SortReverse, v.Unit = 201+r.Int64N(2), r.Int64N(3), r.Int64N(5), r.Int64N(2)*99
			}
			if r.IntN(3) > 0 {
				v.DataType = dts[r.IntN(len(dts))]
			}
			src.Values = append(src.Values, v)
		}
		b, err := json.Marshal(src)
		if err != nil {
			t.Fatal(err)
		}
		before := fast
		check(b)
		plain := !strings.Contains(string(b), `\`) && !strings.Contains(string(b), `"x":[`) && !strings.Contains(string(b), `"x":{`)
		if plain && fast == before {
			t.Fatalf("the fast decoder refuses a plain source: %s", b)
		}
		if fast > before {
			common++
		}
		// Truncations and a trailing byte.
		check(b[:r.IntN(len(b))])
		check(append(b[:len(b):len(b)], ' '))
	}
	for _, s := range []string{
		`{}`, `{"id":1}`, `{ "id":1}`, `{"id":1 }`, `{"id":1,"id":2}`, `{"ID":1}`, `{"Id":1,"guid":"g"}`, `{"id":null}`, `{"id":1.0}`,
		`{"id":1e3}`, `{"id":-0}`, `{"id":01}`, `{"id":"1"}`, `{"id":99999999999999999999}`, `{"other":1}`, `{"deleted":null}`,
		`{"deleted":true}`, `{"deleted":tru}`, `{"values":null}`, `{"values":[]}`, `{"values":[{}]}`, `{"values":[{"x":null}]}`,
		`{"values":[{"x":"a\u0000"}]}`, `{"values":[{"x":"a\q"}]}`, `{"values":[{"x":"a` + "\x01" + `"}]}`, `{"values":[{"x":1.}]}`,
		`{"values":[{"x":-}]}`, `{"values":[{"x":1e+}]}`, `{"values":[{"a":1,"a":2}]}`, `{"values":[{"A":1}]}`, `{"values":[{"x":"\ud800"}]}`,
		`{"values":[{"t":"String","x":"s"},{"t":"\u0053"}]}`, `{"modified":"2024-05-01T10:00:00Z"}`, `{"modified":"2024-05-01T10:00:00.123456789+02:00"}`,
		`{"modified":"2024-05-01"}`, `{"modified":null}`, `{"modified":""}`, `{"guid":"\u0067"}`, `{"guid":"` + "\xff" + `"}`,
		`{"values":[{"x":nul}]}`, `{"values":[{"x":tru}]}`, `{"values":[{"x":"\u12"}]}`, `{"values":[{"x":"\u12G4"}]}`,
		`{"values":[{"x":"\u00E9"}]}`, `{"id":1,}`, `{,"id":1}`, `{"id":1}x`, `[]`, `null`, ``, `{"values":[{"x":"a"}`, `{"values":[{"x":"a"},]}`,
	} {
		check([]byte(s))
	}
	if common < 500 {
		t.Errorf("the fast decoder took %d of 3000 sources as the indexer writes them", common)
	}
	t.Logf("fast decoder: %d of %d documents", fast, all)
}
