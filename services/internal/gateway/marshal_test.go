package gateway

import (
	"strings"
	"testing"
	"time"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestFormatTime(t *testing.T) {
	cases := map[string]time.Time{
		"2024-05-01T10:00:00Z":         time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		"2024-05-01T10:00:00.1Z":       time.Date(2024, 5, 1, 10, 0, 0, 100_000_000, time.UTC),
		"2024-05-01T10:00:07.1086905Z": time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC),
		"2024-05-01T10:00:43.388372Z":  time.Date(2024, 5, 1, 10, 0, 43, 388_372_000, time.UTC),
		"2024-05-01T08:00:00.0000001Z": time.Date(2024, 5, 1, 10, 0, 0, 100, time.FixedZone("CEST", 2*3600)),
		"2024-05-01T10:00:00.1234567Z": time.Date(2024, 5, 1, 10, 0, 0, 123_456_789, time.UTC), // .NET keeps 7 digits
	}
	for want, in := range cases {
		if got := FormatTime(in); got != want {
			t.Errorf("FormatTime(%v) = %s, want %s", in, got, want)
		}
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := WireJSON{}.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMarshalWireFormat(t *testing.T) {
	ts := time.Date(2024, 5, 1, 10, 0, 7, 108_690_500, time.UTC)
	cases := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "int64 is a number, unset optionals are omitted, plain zero scalars are kept",
			in:   &managementv1.CmsTransaction{Id: 9007199254740993, Timestamp: timestamppb.New(ts)},
			want: `{"id":9007199254740993,"timestamp":"2024-05-01T10:00:07.1086905Z"}`,
		},
		{
			name: "optional set to zero is written",
			in:   &managementv1.CmsTransaction{Id: 1, BranchRef: proto.Int32(0), User: proto.String("")},
			want: `{"id":1,"branchRef":0,"user":""}`,
		},
		{
			name: "emit_null writes null; empty repeated is []",
			in:   &managementv1.CmsObjectList{},
			want: `{"count":0,"continue":null,"objects":[]}`,
		},
		{
			name: "Value keeps its JSON type; no HTML escaping",
			in: &managementv1.CmsObject{
				Meta: &managementv1.CmsObjectMetadata{Id: 2100001, Guid: "g", TypeRef: proto.Int32(3), LastTransaction: 12, ApiIdentifier: proto.String("a<b>&c"), Deleted: proto.Bool(false)},
				Values: []*managementv1.CmsValue{
					{Attribute: 1000, Language: 201, Value: structpb.NewStringValue("<p>Hi</p>")},
					{Attribute: 1001, Value: structpb.NewNumberValue(1.5), SortReverse: proto.Int32(0)},
					{Attribute: 1002},
				},
			},
			want: `{"meta":{"id":2100001,"guid":"g","apiIdentifier":"a<b>&c","typeRef":3,"lastTransaction":12,"deleted":false},` +
				`"values":[{"attribute":1000,"variant":0,"language":201,"value":"<p>Hi</p>"},` +
				`{"attribute":1001,"variant":0,"language":0,"value":1.5,"sortReverse":0},` +
				`{"attribute":1002,"variant":0,"language":0,"value":null}]}`,
		},
		{
			name: "response_body slices are arrays of records",
			in:   []*managementv1.CmsTransaction{{Id: 1}, {Id: 2}},
			want: `[{"id":1},{"id":2}]`,
		},
		{name: "response_body string", in: "class A {}", want: `"class A {}"`},
		{name: "Empty has no bytes", in: &emptypb.Empty{}, want: ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := marshal(t, c.in); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestUnmarshalAcceptsNumbersAndIgnoresUnknownFields(t *testing.T) {
	var tx managementv1.CmsTransaction
	err := WireJSON{}.Unmarshal([]byte(`{"id":"42","timestamp":"2024-05-01T10:00:07.1086905Z","extra":1}`), &tx)
	if err != nil {
		t.Fatal(err)
	}
	if tx.GetId() != 42 || tx.GetTimestamp().AsTime().Nanosecond() != 108_690_500 {
		t.Fatalf("decoded %v", &tx)
	}
	if err := (WireJSON{}).Unmarshal([]byte(`{"id":`), &tx); err == nil {
		t.Fatal("truncated JSON decoded without error")
	}
}

func TestStreamErrorChunkIsProblemDetails(t *testing.T) {
	st := status.New(codes.NotFound, "no such file")
	chunk := map[string]proto.Message{"error": st.Proto()}
	if ct := (WireJSON{}).ContentType(chunk); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %s", ct)
	}
	got := marshal(t, chunk)
	want := `{"type":"about:blank","title":"Not Found","status":404,"detail":"no such file"}`
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestBinaryHasNoDelimiterAndKeepsContentType(t *testing.T) {
	b := NewBinary()
	if d := b.Delimiter(); len(d) != 0 {
		t.Fatalf("delimiter %q", d)
	}
	hb := &httpbody.HttpBody{ContentType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}
	out, err := b.Marshal(hb)
	if err != nil || string(out) != "\x89PNG" {
		t.Fatalf("marshal: %q %v", out, err)
	}
	if ct := b.ContentType(hb); ct != "image/png" {
		t.Fatalf("content type %s", ct)
	}
}

func FuzzWireJSONUnmarshal(f *testing.F) {
	f.Add([]byte(`{"meta":{"id":1,"guid":"x"},"values":[{"attribute":1,"value":"a"}]}`))
	f.Add([]byte(`{"values":[{"value":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj managementv1.CmsObject
		if err := (WireJSON{}).Unmarshal(data, &obj); err != nil {
			return
		}
		// Whatever decodes must encode again.
		if _, err := (WireJSON{}).Marshal(&obj); err != nil {
			t.Fatalf("re-encoding %q: %v", data, err)
		}
	})
}
