package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// countDesc is a server-streaming service: Count sends the numbers 1..n
// (reusing one message), with a header and a trailer; n = 3 ends with
// NotFound after its messages; n < 0 waits until the caller goes away.
func countDesc(ended chan<- error) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "test.Count",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "Count", ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
			in := new(wrapperspb.Int64Value)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			if in.GetValue() < 0 {
				<-ss.Context().Done()
				ended <- ss.Context().Err()
				return ss.Context().Err()
			}
			md, _ := metadata.FromIncomingContext(ss.Context())
			if err := grpc.SetHeader(ss.Context(), metadata.Pairs("x-name", strings.Join(md.Get("x-name"), ","))); err != nil {
				return err
			}
			out := new(wrapperspb.Int64Value)
			for i := int64(1); i <= in.GetValue(); i++ {
				out.Value = i
				if err := ss.SendMsg(out); err != nil {
					return err
				}
			}
			ss.SetTrailer(metadata.Pairs("x-sent", strconv.FormatInt(in.GetValue(), 10)))
			if in.GetValue() == 3 {
				return status.Error(codes.NotFound, "three")
			}
			return nil
		}}},
	}
}

func TestInProcessServerStream(t *testing.T) {
	var order []string
	ic := func(name string) grpc.StreamServerInterceptor {
		return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			order = append(order, name+":"+info.FullMethod)
			return h(srv, ss)
		}
	}
	ended := make(chan error, 1)
	c := NewInProcess(grpc.NewServer(), 0).WithStreams(ic("first"), ic("second"))
	c.RegisterService(countDesc(ended), struct{}{})
	desc := &grpc.StreamDesc{StreamName: "Count", ServerStreams: true}
	open := func(ctx context.Context, n int64, opts ...grpc.CallOption) grpc.ClientStream {
		t.Helper()
		s, err := c.NewStream(ctx, desc, "/test.Count/Count", opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SendMsg(wrapperspb.Int64(n)); err != nil {
			t.Fatal(err)
		}
		_ = s.CloseSend()
		return s
	}
	for _, n := range []int64{40, 3} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-name", "ada")
		var trl metadata.MD
		s := open(ctx, n, grpc.Trailer(&trl))
		hdr, err := s.Header()
		if err != nil || strings.Join(hdr.Get("x-name"), ",") != "ada" {
			t.Fatalf("n=%d: header %v, %v", n, hdr, err)
		}
		var got []int64
		for {
			m := new(wrapperspb.Int64Value)
			if err = s.RecvMsg(m); err != nil {
				break
			}
			got = append(got, m.GetValue())
		}
		want := make([]int64, n)
		for i := range want {
			want[i] = int64(i + 1)
		}
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: got %v, want %v (each message a copy)", n, got, want)
		}
		wantErr := codes.OK
		if n == 3 {
			wantErr = codes.NotFound
		}
		if (wantErr == codes.OK && err != io.EOF) || (wantErr != codes.OK && status.Code(err) != wantErr) {
			t.Errorf("n=%d: ended with %v, want %v", n, err, wantErr)
		}
		if strings.Join(s.Trailer().Get("x-sent"), ",") != strconv.FormatInt(n, 10) || len(trl.Get("x-sent")) != 1 {
			t.Errorf("n=%d: trailer %v / %v", n, s.Trailer(), trl)
		}
	}
	if got := strings.Join(order, " "); got != "first:/test.Count/Count second:/test.Count/Count first:/test.Count/Count second:/test.Count/Count" {
		t.Errorf("interceptors ran as %q", got)
	}

	// The caller going away ends the handler.
	ctx, cancel := context.WithCancel(context.Background())
	s := open(ctx, -1)
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not end when the caller went away")
	}
	if err := s.RecvMsg(new(wrapperspb.Int64Value)); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v", err)
	}
}
