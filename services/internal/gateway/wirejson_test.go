package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// refWireString is writeString's reference: encoding/json without HTML
// escaping.
func refWireString(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// trickyStrings covers every escaping rule of both string encoders.
var trickyStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "<p>a & b</p>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"line\u2028para\u2029", "bad \xff utf8 \xc3", "é中𝄞", "\ufffd literal", `\u003c stays \u0026`,
	strings.Repeat("long run of safe text ", 40) + "\n",
}

func randomString(r *rand.Rand) string {
	alphabet := []string{"a", "Z", " ", "<", ">", "&", `"`, `\`, "\n", "\x01", "\x7f", "é", "€", "\u2028", "\u2029", "𝄞", "\xff", "\xe2\x80", "u003c"}
	var sb strings.Builder
	for range r.IntN(12) {
		sb.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return sb.String()
}

func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := append([]string(nil), trickyStrings...)
	for range 5000 {
		in = append(in, randomString(r))
	}
	for _, s := range in {
		var buf bytes.Buffer
		writeString(&buf, s)
		if want := refWireString(t, s); buf.String() != want {
			t.Fatalf("writeString(%q) = %s, want %s", s, buf.String(), want)
		}
	}
}

// The former implementation un-escaped HTML with a byte replace, which
// turned the text `\u003c` (escaped as `\\u003c`) into the invalid `\<`.
func TestWriteStringKeepsLiteralEscapes(t *testing.T) {
	var buf bytes.Buffer
	writeString(&buf, `a\u003cb`)
	var back string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back != `a\u003cb` {
		t.Fatalf("%s decodes to %q, %v", buf.String(), back, err)
	}
}

func FuzzWriteString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		writeString(&buf, s)
		if want := refWireString(t, s); buf.String() != want {
			t.Fatalf("writeString(%q) = %s, want %s", s, buf.String(), want)
		}
	})
}

// protoJSONRef is the former encoding of the JSON value types: protojson,
// compacted.
func protoJSONRef(m proto.Message) (string, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	err = json.Compact(&buf, b)
	return buf.String(), err
}

func randomValue(r *rand.Rand, depth int) *structpb.Value {
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 60, 2100001, 1 << 53, 1<<53 - 1, 1<<53 + 2, 9007199254740993, 1e15, 1e20, 1e21,
		1.5e300, 1e-6, 1e-7, 5e-324, 0.1, 123456.789, float64(r.Int64N(1 << 60)), float64(r.Int64N(1 << 40))}
	k := r.IntN(7)
	if depth > 3 && k >= 4 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return structpb.NewNullValue()
	case 1:
		return structpb.NewNumberValue(floats[r.IntN(len(floats))] * float64(1-2*r.IntN(2)))
	case 2:
		return structpb.NewStringValue(randomString(r))
	case 3:
		return structpb.NewBoolValue(r.IntN(2) == 0)
	case 4:
		return structpb.NewStructValue(randomStruct(r, depth+1))
	case 5:
		l := &structpb.ListValue{}
		for range r.IntN(5) {
			l.Values = append(l.Values, randomValue(r, depth+1))
		}
		return structpb.NewListValue(l)
	}
	return &structpb.Value{} // no kind: an error for both
}

func randomStruct(r *rand.Rand, depth int) *structpb.Struct {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for range r.IntN(20) {
		s.Fields[randomString(r)] = randomValue(r, depth)
	}
	return s
}

func TestJSONValueTypesMatchProtoJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var msgs []proto.Message
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		msgs = append(msgs, structpb.NewNumberValue(f))
	}
	msgs = append(msgs, &structpb.Struct{}, &structpb.ListValue{}, &structpb.Value{},
		structpb.NewStructValue(nil), structpb.NewListValue(nil),
		&structpb.ListValue{Values: []*structpb.Value{nil}},
		&structpb.Struct{Fields: map[string]*structpb.Value{"\xff": structpb.NewNullValue()}})
	for range 3000 {
		msgs = append(msgs, randomStruct(r, 0), randomValue(r, 0))
	}
	var errs int
	for _, m := range msgs {
		want, wantErr := protoJSONRef(m)
		var buf bytes.Buffer
		_, gotErr := encodeWellKnown(&buf, m.ProtoReflect())
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%v: error %v, protojson error %v", m, gotErr, wantErr)
		}
		if wantErr != nil {
			errs++
			if buf.Len() != 0 {
				t.Fatalf("%v: wrote %q on error", m, buf.String())
			}
			continue
		}
		if buf.String() != want {
			t.Fatalf("%v:\ngot  %s\nwant %s", m, buf.String(), want)
		}
	}
	if errs == 0 || errs == len(msgs) {
		t.Fatalf("%d of %d cases were errors: the generator does not cover both", errs, len(msgs))
	}
}

// benchList is a Delivery page shaped like BenchmarkUncachedList100x60:
// 100 objects with 60 refs each and 1000 resolved refs.
func benchList() *deliveryv1.ObjectList {
	ts := timestamppb.New(time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC))
	obj := func(id int, props map[string]any) *deliveryv1.Object {
		p, err := structpb.NewStruct(props)
		if err != nil {
			panic(err)
		}
		api := fmt.Sprintf("obj-%d", id)
		return &deliveryv1.Object{DisplayName: fmt.Sprintf("Object %d", id), Props: p,
			Meta: &deliveryv1.ObjectMeta{Id: int32(id), Guid: "0b4c3c6e-2f0e-4c55-9a57-0c1b5e3c9a1d", ApiIdentifier: &api,
				TypeRef: 2100003, Type: "article", LastTransaction: 120, LastModified: ts, Etag: "AbCdEfGhIjKlMnOpQrStUv"}}
	}
	l := &deliveryv1.ObjectList{Count: 100, More: true}
	for i := range 100 {
		links := make([]any, 60)
		for j := range links {
			links[j] = float64(2200000 + (i*10+j)%1000)
		}
		l.Objs = append(l.Objs, obj(2100000+i, map[string]any{"name": fmt.Sprintf("Article %03d", i), "links": links}))
	}
	for i := range 1000 {
		l.Refs = append(l.Refs, obj(2200000+i, map[string]any{"name": fmt.Sprintf("Target %d", i)}))
	}
	return l
}

// BenchmarkWireJSON encodes a Delivery list page; ratio-% = protojson's
// time for the same message / ours (above 100 = faster than protojson,
// which writes int64 as strings and no .NET timestamps, so it is only a
// yardstick).
func BenchmarkWireJSON(b *testing.B) {
	l := benchList()
	var ours, theirs time.Duration
	var size int
	n := 0
	for b.Loop() {
		t0 := time.Now()
		out, err := WireJSON{}.Marshal(l)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := protojson.Marshal(l); err != nil {
			b.Fatal(err)
		}
		ours += t1.Sub(t0)
		theirs += time.Since(t1)
		size = len(out)
		n++
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(n), "wire-ns/op")
	b.ReportMetric(float64(theirs.Nanoseconds())/float64(n), "protojson-ns/op")
	b.ReportMetric(100*float64(theirs)/float64(ours), "ratio-%")
	b.ReportMetric(float64(size), "bytes")
}
