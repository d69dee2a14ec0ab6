package interceptors

import (
	"context"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// RecvLimits bounds what one gRPC call may send, so that no operation
// accepts more over gRPC than over HTTP: Message is the HTTP body limit
// (edge.maxBodyBytes) and caps every request message of a unary or
// server-streaming call; Upload is the HTTP upload limit (maxUploadBytes)
// and caps the messages of one client-streaming call (an upload) together. The server's
// grpc.MaxRecvMsgSize refuses larger messages before they are decoded;
// these checks hold the limits per operation where that global one is
// higher (it must admit a whole upload chunk). 0 disables a check.
type RecvLimits struct {
	Message, Upload int64
}

// tooLarge words a refusal like gRPC's own (codes.ResourceExhausted,
// "grpc: received message larger than max"), which the gateway answers
// with 413.
func tooLarge(n, limit int64) error {
	return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, limit)
}

// Unary refuses a request message larger than Message.
func (l RecvLimits) Unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok && l.Message > 0 {
		if n := int64(proto.Size(m)); n > l.Message {
			return nil, tooLarge(n, l.Message)
		}
	}
	return handler(ctx, req)
}

// Stream refuses, on a client-streaming call (an upload, whose HTTP limit
// is for the whole body), messages beyond Upload together, and on any
// other call a request message larger than Message.
func (l RecvLimits) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if l.Message <= 0 && l.Upload <= 0 {
		return handler(srv, ss)
	}
	return handler(srv, &limitedStream{ServerStream: ss, limits: l, client: info.IsClientStream})
}

type limitedStream struct {
	grpc.ServerStream
	limits RecvLimits
	client bool
	total  atomic.Int64
}

func (s *limitedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return nil
	}
	n := int64(proto.Size(pm))
	if !s.client {
		if s.limits.Message > 0 && n > s.limits.Message {
			return tooLarge(n, s.limits.Message)
		}
		return nil
	}
	if t := s.total.Add(n); s.limits.Upload > 0 && t > s.limits.Upload {
		return status.Error(codes.ResourceExhausted, fmt.Sprintf("the messages of this call exceed the upload limit of %d bytes together", s.limits.Upload))
	}
	return nil
}
