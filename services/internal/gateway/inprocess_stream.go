package gateway

import (
	"context"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Server streams in process. With WithStreams, a server-streaming call
// (one request, a stream of answers: binary downloads, Delivery's change
// stream) runs the service's stream handler in a goroutine of its own,
// through the server's stream interceptor chain, and hands each message
// over a bounded channel (a copy: the handler may reuse its message), so
// a long-lived stream costs no HTTP/2 stream, encoding or loopback round
// trip per message. Client-streaming calls (uploads) keep the loopback
// connection.

// inProcessQueue bounds the messages a stream's handler may send ahead of
// the gateway; beyond, Send waits (as gRPC flow control would). A file
// download sends 256 KiB chunks, so one holds at most about 1 MiB ahead.
const inProcessQueue = 4

type inProcessStreamMethod struct {
	srv     any
	handler grpc.StreamHandler
}

// WithStreams serves server-streaming calls in process through stream, the
// server's stream interceptors in the same order. Call it before
// RegisterService.
func (c *InProcess) WithStreams(stream ...grpc.StreamServerInterceptor) *InProcess {
	c.stream = chainStream(stream...)
	return c
}

func (c *InProcess) registerStreams(desc *grpc.ServiceDesc, impl any) {
	if c.stream == nil {
		return
	}
	for _, s := range desc.Streams {
		if s.ServerStreams && !s.ClientStreams {
			c.streamMethods["/"+desc.ServiceName+"/"+s.StreamName] = inProcessStreamMethod{srv: impl, handler: s.Handler}
		}
	}
}

func chainStream(ics ...grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		var next func(i int) grpc.StreamHandler
		next = func(i int) grpc.StreamHandler {
			if i == len(ics) {
				return h
			}
			return func(srv any, ss grpc.ServerStream) error { return ics[i](srv, ss, info, next(i+1)) }
		}
		return next(0)(srv, ss)
	}
}

// serveStream starts method's handler and returns the client's end.
func (c *InProcess) serveStream(ctx context.Context, method string, m inProcessStreamMethod, opts []grpc.CallOption) *pipeClient {
	sctx, cancel := context.WithCancel(c.serverContext(ctx))
	p := &pipe{inProcessStream: inProcessStream{method: method}, req: make(chan any, 1), msgs: make(chan proto.Message, inProcessQueue),
		headerSent: make(chan struct{}), done: make(chan struct{}), cancel: cancel, conn: c}
	p.sctx = grpc.NewContextWithServerTransportStream(sctx, p)
	go func() {
		err := c.stream(m.srv, &pipeServer{p}, &grpc.StreamServerInfo{FullMethod: method, IsServerStream: true}, m.handler)
		p.finish(err)
	}()
	return &pipeClient{p: p, ctx: ctx, opts: opts}
}

// pipe is one in-process stream: the request one way, messages, header
// and trailer and the final status the other.
type pipe struct {
	sctx   context.Context
	cancel context.CancelFunc
	conn   *InProcess // its request size limit
	req    chan any
	msgs   chan proto.Message
	done   chan struct{} // closed when the handler returned; err is set
	err    error

	mu sync.Mutex
	// inProcessStream holds the header and trailer (mu held) and names
	// the method.
	inProcessStream
	headerSent chan struct{}
	sent       bool
}

func (p *pipe) sendHeaderLocked() {
	if !p.sent {
		p.sent = true
		close(p.headerSent)
	}
}

func (p *pipe) finish(err error) {
	if err != nil {
		err = asStatus(err)
	}
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
	close(p.done)
	p.cancel()
}

// SetHeader, SendHeader and SetTrailer implement
// grpc.ServerTransportStream (grpc.SetHeader in the handler) like
// inProcessStream's, under mu and refusing a header after it was sent.
func (p *pipe) SetHeader(md metadata.MD) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent {
		return status.Error(codes.Internal, "transport: the header was already sent")
	}
	return p.inProcessStream.SetHeader(md)
}

func (p *pipe) SendHeader(md metadata.MD) error {
	if err := p.SetHeader(md); err != nil {
		return err
	}
	p.mu.Lock()
	p.sendHeaderLocked()
	p.mu.Unlock()
	return nil
}

func (p *pipe) SetTrailer(md metadata.MD) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inProcessStream.SetTrailer(md)
}

// pipeServer is the handler's end (grpc.ServerStream).
type pipeServer struct{ *pipe }

func (s *pipeServer) SetTrailer(md metadata.MD) { _ = s.pipe.SetTrailer(md) }

func (s *pipeServer) Context() context.Context { return s.sctx }

func (s *pipeServer) SendMsg(m any) error {
	msg, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "in-process stream %s: message %T is not a protobuf message", s.method, m)
	}
	s.mu.Lock()
	s.sendHeaderLocked()
	s.mu.Unlock()
	select {
	case s.msgs <- proto.Clone(msg):
		return nil
	case <-s.sctx.Done():
		return status.FromContextError(s.sctx.Err()).Err()
	}
}

func (s *pipeServer) RecvMsg(m any) error {
	select {
	case req, ok := <-s.req:
		if !ok {
			return io.EOF
		}
		close(s.req)
		if in, ok := req.(proto.Message); ok {
			if err := s.conn.checkSize(in); err != nil {
				return err
			}
		}
		return shallowCopy(m, req)
	case <-s.sctx.Done():
		return status.FromContextError(s.sctx.Err()).Err()
	}
}

// pipeClient is the gateway's end (grpc.ClientStream).
type pipeClient struct {
	p    *pipe
	ctx  context.Context
	opts []grpc.CallOption
	sent bool
}

func (c *pipeClient) Context() context.Context { return c.ctx }

// Header waits for the header; a stream that ended without one answers
// what it set, like a trailers-only answer over the network.
func (c *pipeClient) Header() (metadata.MD, error) {
	select {
	case <-c.p.headerSent:
	case <-c.p.done:
	case <-c.ctx.Done():
		return nil, status.FromContextError(c.ctx.Err()).Err()
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if !c.p.sent {
		return metadata.Join(c.p.header, c.p.trailer), nil
	}
	return c.p.header.Copy(), nil
}

func (c *pipeClient) Trailer() metadata.MD {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.p.trailer.Copy()
}

func (c *pipeClient) CloseSend() error { return nil }

func (c *pipeClient) SendMsg(m any) error {
	if c.sent {
		return status.Error(codes.Internal, "in-process stream: one request only")
	}
	c.sent = true
	c.p.req <- m
	return nil
}

// RecvMsg hands over the next message; once the handler returned and its
// messages are taken, its status (io.EOF for OK).
func (c *pipeClient) RecvMsg(m any) error {
	select {
	case msg := <-c.p.msgs:
		return shallowCopy(m, msg)
	default:
	}
	select {
	case msg := <-c.p.msgs:
		return shallowCopy(m, msg)
	case <-c.p.done:
		select {
		case msg := <-c.p.msgs: // sent just before the end
			return shallowCopy(m, msg)
		default:
		}
		c.fillCallOptions()
		if c.p.err != nil {
			return c.p.err
		}
		return io.EOF
	case <-c.ctx.Done():
		return status.FromContextError(c.ctx.Err()).Err()
	}
}

func (c *pipeClient) fillCallOptions() {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	fillCallOptions(c.opts, c.p.header.Copy(), c.p.trailer.Copy())
}

// asStatus turns a handler's error into a status error, as the transport
// does.
func asStatus(err error) error {
	if _, isStatus := status.FromError(err); isStatus {
		return err
	}
	if ce := status.FromContextError(err); ce.Code() != codes.Unknown {
		return ce.Err()
	}
	return status.Error(codes.Unknown, err.Error())
}

var _ grpc.ServerTransportStream = (*pipe)(nil)
