package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/delivery"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/protobuf/proto"
)

// The REST answers of Get and List are written by pkg/delivery straight
// from the rendered view (AppendSingleJSON, AppendListJSON); gRPC clients
// get the messages toObject builds, which the gateway used to encode for
// REST too. These tests hold the two to the same bytes.

// oldSingleJSON is the former REST answer of a Get: the message gRPC
// clients get, encoded by the gateway.
func oldSingleJSON(one delivery.Single) ([]byte, error) {
	out, err := singleMessage(one)
	if err != nil {
		return nil, err
	}
	return gateway.WireJSON{}.Marshal(out)
}

func oldListJSON(l delivery.List) ([]byte, error) {
	out, err := listMessage(l)
	if err != nil {
		return nil, err
	}
	return gateway.WireJSON{}.Marshal(out)
}

// wireStrings: every escaping rule of both string encoders (plain strings
// and Struct strings), valid UTF-8 only (invalid is an error, tested
// apart).
var wireStrings = []string{"", "plain", `quote " backslash \ slash /`, "<p>a & b</p>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"line\u2028para\u2029", "é中𝄞", "\ufffd literal", `\u003c stays \u0026`, "emoji 😀 and ZWJ 👩‍💻",
	strings.Repeat("long run of safe text ", 30) + "\n"}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return wireStrings[r.IntN(len(wireStrings))]
	}
	alphabet := []string{"a", "Z", "0", " ", "<", ">", "&", `"`, `\`, "/", "\n", "\t", "\x01", "\x1f", "\x7f", "é", "€", "\u2028", "\u2029", "𝄞", "u003c", "\ufffd"}
	var sb strings.Builder
	for range r.IntN(10) {
		sb.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return sb.String()
}

var wireNumbers = []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 19.99, 60, 2100001, 1 << 31, 1<<53 - 1, 1 << 53, 1<<53 + 2,
	1e15, 1e20, 1e21, 1.5e300, 1e-6, 1e-7, 5e-324, 123456.789, -987.125}

func randValue(r *rand.Rand, depth int) any {
	k := r.IntN(12)
	if depth > 2 && k >= 9 {
		k = r.IntN(9)
	}
	switch k {
	case 0:
		return nil
	case 1, 2:
		return randString(r)
	case 3:
		ints := []int64{0, 1, -1, 2100000 + r.Int64N(100000), 1<<31 - 1, 1 << 31, -1 << 31, 1<<53 - 1, 1 << 53, 1<<53 + 1, 1<<62 + 7, math.MaxInt64, math.MinInt64}
		return ints[r.IntN(len(ints))]
	case 4:
		return wireNumbers[r.IntN(len(wireNumbers))] * float64(1-2*r.IntN(2))
	case 5:
		return r.Float64() * math.Pow(10, float64(r.IntN(40)-20))
	case 6:
		return r.IntN(2) == 0
	case 7:
		return json.Number([]string{"12", "-3.5", "1e3", "0"}[r.IntN(4)])
	case 8:
		return map[string]any{"XML": randString(r)}
	case 9, 10:
		l := make([]any, r.IntN(6))
		for i := range l {
			l[i] = randValue(r, depth+1)
		}
		return l
	}
	m := map[string]any{}
	for range r.IntN(5) {
		m[randString(r)] = randValue(r, depth+1)
	}
	return m
}

func randObject(r *rand.Rand) delivery.Object {
	ids := []int64{0, 1, 2100000 + r.Int64N(1000000), 1<<31 - 1, 1 << 31, 1<<32 + 5, -7}
	o := delivery.Object{DisplayName: randString(r), Meta: delivery.Meta{ID: ids[r.IntN(len(ids))], GUID: randString(r),
		TypeRef: ids[r.IntN(len(ids))], Type: randString(r), LastTransaction: r.Int64N(1 << 40), Deleted: r.IntN(4) == 0,
		ETag: "AbCdEfGhIjKlMnOpQrStUv"}}
	if r.IntN(2) == 0 {
		o.Meta.APIIdentifier = randString(r)
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		o.Meta.LastModified = time.Date(2024, 5, 1, 10, 0, 7, 0, time.UTC)
	case 2:
		o.Meta.LastModified = time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("X", 3600))
	default:
		o.Meta.LastModified = time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC)
	}
	if r.IntN(3) == 0 {
		icon := ids[r.IntN(len(ids))]
		o.DisplayIcon = &icon
	}
	if r.IntN(8) != 0 {
		o.Props = map[string]any{}
		for range r.IntN(8) {
			o.Props[randString(r)] = randValue(r, 0)
		}
	}
	switch r.IntN(4) {
	case 0:
		o.Reverse = map[string][]int64{}
	case 1:
		o.Reverse = map[string][]int64{randString(r): {1, 2100000, 1 << 40}, randString(r): {}}
	}
	return o
}

func TestWireJSONMatchesTheMessages(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	for i := range 3000 {
		objs := make([]delivery.Object, r.IntN(4))
		for j := range objs {
			objs[j] = randObject(r)
		}
		one := delivery.Single{Obj: randObject(r), Refs: objs}
		want, err := oldSingleJSON(one)
		if err != nil {
			t.Fatalf("case %d: the message path fails: %v", i, err)
		}
		got, err := delivery.AppendSingleJSON(nil, one)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d: single\ngot  %s (%v)\nwant %s", i, got, err, want)
		}
		if !json.Valid(got) {
			t.Fatalf("case %d: invalid JSON %s", i, got)
		}
		l := delivery.List{Skip: r.IntN(1 << 20), Count: len(objs), More: r.IntN(2) == 0, Objs: objs}
		if r.IntN(2) == 0 {
			l.Refs = []delivery.Object{randObject(r)}
		}
		want, err = oldListJSON(l)
		if err != nil {
			t.Fatalf("case %d: the message path fails: %v", i, err)
		}
		got, err = delivery.AppendListJSON(nil, l)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d: list\ngot  %s (%v)\nwant %s", i, got, err, want)
		}
	}
}

// What the message path refuses (invalid UTF-8 anywhere, a value without
// a JSON form, a non-finite number), the JSON path refuses too.
func TestWireJSONRefusesWhatTheMessagesRefuse(t *testing.T) {
	bad := []delivery.Object{
		{Props: map[string]any{"a": "\xff"}}, {Props: map[string]any{"\xff": "a"}}, {Props: map[string]any{"a": []any{"\xff"}}},
		{Props: map[string]any{"a": map[string]any{"XML": "\xc3"}}}, {Props: map[string]any{"a": struct{}{}}},
		{Props: map[string]any{"a": math.NaN()}}, {Props: map[string]any{"a": math.Inf(-1)}}, {Props: map[string]any{"a": json.Number("x")}},
		{Reverse: map[string][]int64{"\xff": {1}}}, {DisplayName: "\xff"}, {Meta: delivery.Meta{GUID: "a\xffb"}},
		{Meta: delivery.Meta{APIIdentifier: "\xe2\x80"}}, {Meta: delivery.Meta{Type: "\xff"}},
	}
	for i, o := range bad {
		one := delivery.Single{Obj: o}
		// The gateway's encoder writes string fields with \ufffd; the
		// response cache's protobuf encoding refuses them first.
		_, errJSON := oldSingleJSON(one)
		if _, errProto := protoMarshal(one); errJSON == nil && errProto == nil {
			t.Fatalf("case %d: the message path accepts it: the test is wrong", i)
		}
		if b, err := delivery.AppendSingleJSON(nil, one); err == nil {
			t.Errorf("case %d: %+v encoded as %s", i, o, b)
		}
	}
}

func protoMarshal(one delivery.Single) ([]byte, error) {
	out, err := singleMessage(one)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(out)
}

// The REST answer, written from the view, is the gRPC answer as the
// gateway encodes messages, for real reads of the published site.
func TestRESTAnswersAreTheGRPCAnswers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cases := []struct {
		path string
		call func() (any, error)
	}{
		{"/branches/4/objects/home?resolve=moduleRefs", func() (any, error) {
			return h.client.Get(ctx, &deliveryv1.GetRequest{Branch: "4", Id: "home", Resolve: "moduleRefs"})
		}},
		{"/branches/4/objects/home?props=1&lang=de-DE", func() (any, error) {
			p := int32(1)
			return h.client.Get(ctx, &deliveryv1.GetRequest{Branch: "4", Id: "home", Props: &p, Lang: "de-DE"})
		}},
		{"/branches/4/objects?take=50&resolve=moduleRefs", func() (any, error) {
			n := int32(50)
			return h.client.List(ctx, &deliveryv1.ListRequest{Branch: "4", Take: &n, Resolve: "moduleRefs"})
		}},
		{"/branches/4/objects?take=3&skip=2&sort=id%20desc", func() (any, error) {
			n, k := int32(3), int32(2)
			return h.client.List(ctx, &deliveryv1.ListRequest{Branch: "4", Take: &n, Skip: &k, Sort: "id desc"})
		}},
	}
	for _, c := range cases {
		rest := h.get(t, 200, c.path).body
		msg, err := c.call()
		if err != nil {
			t.Fatalf("%s over gRPC: %v", c.path, err)
		}
		want, err := gateway.WireJSON{}.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rest, want) {
			t.Errorf("%s:\nREST %s\ngRPC %s", c.path, rest, want)
		}
		if one, ok := msg.(*deliveryv1.ObjectResult); ok && (one.GetObj() == nil || len(one.ProtoReflect().GetUnknown()) > 0) {
			t.Errorf("%s: the gRPC answer is not the message: %v", c.path, one)
		}
		if l, ok := msg.(*deliveryv1.ObjectList); ok && (len(l.GetObjs()) == 0 || len(l.ProtoReflect().GetUnknown()) > 0) {
			t.Errorf("%s: the gRPC answer is not the message: %v", c.path, l)
		}
	}
}
