package gateway

import (
	"context"
	"net"
	"reflect"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// InProcess is the gateway's connection to the services of its own
// process. Unary calls run the service's method handler directly, through
// the same interceptor chain as a call arriving over the network
// (recovery, observation, authentication, authorization), with the
// gateway's outgoing metadata as the call's incoming metadata and the
// headers and trailers the handler sets handed back to the gateway. That
// saves the HTTP/2 framing, the protobuf encoding and decoding and the
// loopback round trip of every REST request. Server streams run in
// process too when WithStreams gives the stream interceptors
// (inprocess_stream.go); client streams (uploads) go over the loopback
// connection given to ServeStreams.
//
// InProcess is also the grpc.ServiceRegistrar the services register on:
// it registers them on the gRPC server and keeps their unary handlers.
type InProcess struct {
	server    *grpc.Server
	methods   map[string]inProcessMethod // by full method name
	unary     grpc.UnaryServerInterceptor
	maxRecv   int
	streams   grpc.ClientConnInterface
	localAddr net.Addr
	// stream and streamMethods serve server streams (WithStreams).
	stream        grpc.StreamServerInterceptor
	streamMethods map[string]inProcessStreamMethod
}

type inProcessMethod struct {
	srv     any
	handler grpc.MethodHandler
}

// NewInProcess returns the connection for services registered on server
// through it; unary are server's unary interceptors, in the same order,
// and maxRecv its request size limit (0: none).
func NewInProcess(server *grpc.Server, maxRecv int, unary ...grpc.UnaryServerInterceptor) *InProcess {
	return &InProcess{server: server, methods: map[string]inProcessMethod{}, unary: chainUnary(unary...), maxRecv: maxRecv,
		streamMethods: map[string]inProcessStreamMethod{}}
}

// RegisterService implements grpc.ServiceRegistrar.
func (c *InProcess) RegisterService(desc *grpc.ServiceDesc, impl any) {
	c.server.RegisterService(desc, impl)
	for _, m := range desc.Methods {
		c.methods["/"+desc.ServiceName+"/"+m.MethodName] = inProcessMethod{srv: impl, handler: m.Handler}
	}
	c.registerStreams(desc, impl)
}

// ServeStreams sets the loopback connection streams use and the address
// handlers see as the caller's (as over the network).
func (c *InProcess) ServeStreams(conn grpc.ClientConnInterface, local net.Addr) {
	c.streams, c.localAddr = conn, local
}

// chainUnary runs the interceptors in order around the handler, as
// grpc.ChainUnaryInterceptor does for network calls.
func chainUnary(ics ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		var next func(i int) grpc.UnaryHandler
		next = func(i int) grpc.UnaryHandler {
			if i == len(ics) {
				return h
			}
			return func(ctx context.Context, req any) (any, error) { return ics[i](ctx, req, info, next(i+1)) }
		}
		return next(0)(ctx, req)
	}
}

// Invoke implements grpc.ClientConnInterface.
func (c *InProcess) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	m, ok := c.methods[method]
	if !ok {
		return c.streams.Invoke(ctx, method, args, reply, opts...)
	}
	in, ok := args.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "in-process call %s: request %T is not a protobuf message", method, args)
	}
	if err := c.checkSize(in); err != nil {
		return err
	}
	ts := &inProcessStream{method: method}
	sctx := grpc.NewContextWithServerTransportStream(c.serverContext(ctx), ts)
	sctx = context.WithValue(sctx, inProcessMethodKey{}, method)
	dec := func(v any) error {
		// The gateway does not use its request after the call: a shallow
		// copy hands it over without encoding.
		return shallowCopy(v, args)
	}
	out, err := m.handler(m.srv, sctx, dec, c.unary)
	fillCallOptions(opts, ts.header, ts.trailer)
	if err != nil {
		return asStatus(err)
	}
	return shallowCopy(reply, out)
}

// checkSize refuses a request over the limit a network call meets in the
// server's transport.
func (c *InProcess) checkSize(in proto.Message) error {
	if c.maxRecv <= 0 {
		return nil
	}
	if n := proto.Size(in); n > c.maxRecv {
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, c.maxRecv)
	}
	return nil
}

// serverContext is the handler's view of the gateway's call context: the
// outgoing metadata as incoming, the listener's address as the peer.
func (c *InProcess) serverContext(ctx context.Context) context.Context {
	// FromOutgoingContext returns a copy already (and FromIncomingContext
	// hands the handler another): a third one would be garbage.
	md, _ := metadata.FromOutgoingContext(ctx)
	sctx := metadata.NewIncomingContext(ctx, md)
	return peer.NewContext(sctx, &peer.Peer{Addr: c.localAddr, LocalAddr: c.localAddr})
}

// fillCallOptions hands the handler's header and trailer to the gateway
// through its grpc.Header and grpc.Trailer call options.
func fillCallOptions(opts []grpc.CallOption, header, trailer metadata.MD) {
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = trailer
		}
	}
}

// NewStream implements grpc.ClientConnInterface: server streams run in
// process (WithStreams), the others use the loopback connection.
func (c *InProcess) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if m, ok := c.streamMethods[method]; ok && desc.ServerStreams && !desc.ClientStreams {
		return c.serveStream(ctx, method, m, opts), nil
	}
	return c.streams.NewStream(ctx, desc, method, opts...)
}

// shallowCopy sets *dst to *src for two pointers to the same message type.
func shallowCopy(dst, src any) error {
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Kind() != reflect.Pointer || sv.Kind() != reflect.Pointer || dv.Type() != sv.Type() || sv.IsNil() {
		return status.Errorf(codes.Internal, "in-process call: cannot hand %T over as %T", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// inProcessStream collects what a handler sets with grpc.SetHeader,
// grpc.SendHeader and grpc.SetTrailer.
type inProcessStream struct {
	method          string
	header, trailer metadata.MD
}

func (s *inProcessStream) Method() string { return s.method }

func (s *inProcessStream) SetHeader(md metadata.MD) error {
	s.header = joinLower(s.header, md)
	return nil
}

func (s *inProcessStream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *inProcessStream) SetTrailer(md metadata.MD) error {
	s.trailer = joinLower(s.trailer, md)
	return nil
}

// joinLower is metadata.Join(into, lowerKeys(md)): the first set is the
// copy lowerKeys makes, not a copy of that copy.
func joinLower(into, md metadata.MD) metadata.MD {
	if into == nil {
		return lowerKeys(md)
	}
	return metadata.Join(into, lowerKeys(md))
}

// lowerKeys matches the transport, which sends metadata keys in lower
// case (metadata.Pairs lowers them already; a literal MD may not).
func lowerKeys(md metadata.MD) metadata.MD {
	out := make(metadata.MD, len(md))
	for k, v := range md {
		l := strings.ToLower(k)
		out[l] = append(out[l], v...)
	}
	return out
}

var _ grpc.ClientConnInterface = (*InProcess)(nil)
