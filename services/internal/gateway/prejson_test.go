package gateway

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// wireJSONDesc answers with its wire JSON when TakesWireJSON says it may,
// else with the message.
var wireJSONDesc = grpc.ServiceDesc{
	ServiceName: "test.Wire",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Get", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.Wire/Get"}, func(ctx context.Context, req any) (any, error) {
			if TakesWireJSON(ctx) {
				return WithWireJSON(&wrapperspb.StringValue{}, func(b []byte) ([]byte, error) { return append(b, `{"as":"bytes"}`...), nil })
			}
			return wrapperspb.String("message"), nil
		})
	}}},
}

func TestWireJSONOnlyForTheGatewaysInProcessCall(t *testing.T) {
	var nested bool
	ic := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		// A call the handler's context makes in turn is not the
		// gateway's: another method must not see the mark.
		nested = TakesWireJSON(grpc.NewContextWithServerTransportStream(ctx, &inProcessStream{method: "/other/Method"}))
		return h(ctx, req)
	}
	srv := grpc.NewServer()
	c := NewInProcess(srv, 0, ic)
	c.RegisterService(&wireJSONDesc, struct{}{})
	c.ServeStreams(nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	out := new(wrapperspb.StringValue)
	if err := c.Invoke(context.Background(), "/test.Wire/Get", wrapperspb.String("x"), out); err != nil {
		t.Fatal(err)
	}
	b, err := WireJSON{}.Marshal(out)
	if err != nil || string(b) != `{"as":"bytes"}` {
		t.Fatalf("the gateway writes %s, %v; want the handler's bytes", b, err)
	}
	if nested {
		t.Error("another method's call saw the gateway's mark")
	}
	// Anywhere else (a network call has no mark) the handler answers with
	// the message, which the gateway encodes.
	if TakesWireJSON(grpc.NewContextWithServerTransportStream(context.Background(), &inProcessStream{method: "/test.Wire/Get"})) {
		t.Error("a call without the gateway's mark may answer with bytes")
	}
	b, err = WireJSON{}.Marshal(wrapperspb.String("message"))
	if err != nil || string(b) != `"message"` {
		t.Fatalf("a message is written as %s, %v", b, err)
	}
}

func TestWireJSONCarrier(t *testing.T) {
	m, err := WithWireJSON(&wrapperspb.StringValue{}, func(b []byte) ([]byte, error) { return append(b, `[1,2]`...), nil })
	if err != nil {
		t.Fatal(err)
	}
	// Through the response cache's encoding and back, unchanged.
	enc, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	back := new(wrapperspb.StringValue)
	if err := proto.Unmarshal(enc, back); err != nil {
		t.Fatal(err)
	}
	if b, ok := wireJSONOf(back); !ok || string(b) != `[1,2]` {
		t.Fatalf("after the round trip: %q, %v", b, ok)
	}
	// Other unknown fields, or more than the one field, are no wire JSON.
	other := new(wrapperspb.StringValue)
	other.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte("x")))
	if _, ok := wireJSONOf(other); ok {
		t.Error("an unknown field 99 read as wire JSON")
	}
	two := new(wrapperspb.StringValue)
	raw := append([]byte(nil), m.ProtoReflect().GetUnknown()...)
	two.ProtoReflect().SetUnknown(append(raw, raw...))
	if _, ok := wireJSONOf(two); ok {
		t.Error("two fields read as one answer")
	}
	var nilMsg *wrapperspb.StringValue
	if _, ok := wireJSONOf(nilMsg); ok {
		t.Error("a nil message carries wire JSON")
	}
	boom := errors.New("boom")
	if _, err := WithWireJSON(&wrapperspb.StringValue{}, func(b []byte) ([]byte, error) { return b, boom }); !errors.Is(err, boom) {
		t.Errorf("fill's error: %v", err)
	}
}
