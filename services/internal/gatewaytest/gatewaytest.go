// Package gatewaytest serves one API group in a test the way the server
// does: gRPC on a loopback listener and the REST gateway in front of it.
package gatewaytest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Group is what every API group offers the server.
type Group interface {
	RegisterGRPC(s grpc.ServiceRegistrar)
	RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error
}

// Serve registers g on a gRPC server with the unary interceptors, serves
// it on a loopback port and puts the gateway in front of it, calling the
// service in process as the server does, wrapped in middleware (the first
// outermost). It returns a client connection over the loopback port and
// the HTTP server's URL; everything stops when the test ends.
func Serve(t testing.TB, g Group, unary []grpc.UnaryServerInterceptor, middleware ...func(http.Handler) http.Handler) (*grpc.ClientConn, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...))
	inProcess := gateway.NewInProcess(srv, 0, unary...).WithStreams() // server streams in process, as the server serves them
	g.RegisterGRPC(inProcess)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	inProcess.ServeStreams(conn, ln.Addr())
	mux := gateway.NewServeMux()
	if err := g.RegisterGateway(context.Background(), mux, inProcess); err != nil {
		t.Fatal(err)
	}
	var h http.Handler = mux
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return conn, hs.URL
}
