package interceptors

import (
	"context"
	"errors"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Auth authenticates every call with the HTTP Basic credentials in the
// authorization metadata (the gateway forwards the header). Methods whose
// full name starts with one of Public (health checks, reflection) are open.
type Auth struct {
	Authenticator auth.Authenticator
	Public        []string
}

func (a Auth) authorize(ctx context.Context, method string) (context.Context, error) {
	for _, p := range a.Public {
		if strings.HasPrefix(method, p) {
			return ctx, nil
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	p, err := auth.Authorize(ctx, a.Authenticator, first(md, "authorization"), first(md, "x-cmsapi-username"))
	switch {
	case errors.Is(err, auth.ErrNoCredentials):
		_ = grpc.SetHeader(ctx, metadata.Pairs("www-authenticate", `Basic realm="cms", charset="UTF-8"`))
		return nil, status.Error(codes.Unauthenticated, "this operation needs HTTP Basic credentials")
	case errors.Is(err, auth.ErrBadCredentials):
		_ = grpc.SetHeader(ctx, metadata.Pairs("www-authenticate", `Basic realm="cms", charset="UTF-8"`))
		return nil, status.Error(codes.Unauthenticated, "invalid user name or password")
	case errors.Is(err, auth.ErrForbidden):
		return nil, status.Error(codes.PermissionDenied, "only internal callers may act for another user (X-CmsApi-Username)")
	case err != nil:
		if st := gateway.Unavailable(ctx, err); st != nil {
			return nil, st // the user store is down or slow: 503, not 500
		}
		return nil, status.Error(codes.Internal, "authentication failed")
	}
	return auth.WithPrincipal(ctx, p), nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Unary implements grpc.UnaryServerInterceptor.
func (a Auth) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := a.authorize(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream implements grpc.StreamServerInterceptor.
func (a Auth) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := a.authorize(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return h(srv, &contextStream{ServerStream: ss, ctx: ctx})
}

type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }
