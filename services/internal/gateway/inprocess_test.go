package gateway

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// echoDesc is a one-method service: Echo answers the request's value
// with the caller's "x-name" metadata and peer appended, sets a header
// and a trailer, and fails as the value asks.
var echoDesc = grpc.ServiceDesc{
	ServiceName: "test.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) {
			v := req.(*wrapperspb.StringValue).GetValue()
			_ = grpc.SetHeader(ctx, metadata.MD{"ETag": {`"t1"`}})
			_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "done"))
			switch v {
			case "plain-error":
				return nil, errors.New("boom")
			case "deadline":
				return nil, context.DeadlineExceeded
			case "status":
				return nil, status.Error(codes.NotFound, "no such thing")
			}
			md, _ := metadata.FromIncomingContext(ctx)
			p, _ := peer.FromContext(ctx)
			return wrapperspb.String(v + "|" + strings.Join(md.Get("x-name"), ",") + "|" + p.Addr.String()), nil
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.Echo/Echo"}, h)
	}}},
}

func TestInProcess(t *testing.T) {
	var order []string
	ic := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			order = append(order, name+":"+info.FullMethod)
			return h(ctx, req)
		}
	}
	srv := grpc.NewServer()
	c := NewInProcess(srv, 64, ic("first"), ic("second"))
	c.RegisterService(&echoDesc, struct{}{})
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4242}
	c.ServeStreams(nil, addr)
	if _, ok := srv.GetServiceInfo()["test.Echo"]; !ok {
		t.Fatal("the service was not registered on the gRPC server")
	}

	call := func(v string) (*wrapperspb.StringValue, metadata.MD, metadata.MD, error) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-name", "ada")
		var hdr, trl metadata.MD
		out := new(wrapperspb.StringValue)
		err := c.Invoke(ctx, "/test.Echo/Echo", wrapperspb.String(v), out, grpc.Header(&hdr), grpc.Trailer(&trl))
		return out, hdr, trl, err
	}
	out, hdr, trl, err := call("hi")
	if err != nil {
		t.Fatal(err)
	}
	if want := "hi|ada|127.0.0.1:4242"; out.GetValue() != want {
		t.Errorf("answer %q, want %q (request, incoming metadata, peer)", out.GetValue(), want)
	}
	if got := strings.Join(order, " "); got != "first:/test.Echo/Echo second:/test.Echo/Echo" {
		t.Errorf("interceptors ran as %q", got)
	}
	if strings.Join(hdr.Get("etag"), ",") != `"t1"` || strings.Join(trl.Get("x-trailer"), ",") != "done" {
		t.Errorf("header %v, trailer %v: want etag (lower-cased key) and x-trailer", hdr, trl)
	}

	for v, want := range map[string]codes.Code{"plain-error": codes.Unknown, "deadline": codes.DeadlineExceeded, "status": codes.NotFound} {
		_, hdr, _, err := call(v)
		if status.Code(err) != want {
			t.Errorf("%s: %v, want %s", v, err, want)
		}
		if len(hdr.Get("etag")) != 1 {
			t.Errorf("%s: header %v lost with the error", v, hdr)
		}
	}
	if _, _, _, err := call(strings.Repeat("x", 100)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a request over the size limit: %v, want ResourceExhausted", err)
	}
	if err := c.Invoke(context.Background(), "/test.Echo/Echo", wrapperspb.String("x"), new(wrapperspb.Int64Value)); status.Code(err) != codes.Internal {
		t.Errorf("a reply of another type: %v, want Internal", err)
	}
}
