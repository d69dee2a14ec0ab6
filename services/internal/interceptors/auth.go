package interceptors

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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
	actx := ctx
	if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
		actx = auth.WithClientAddr(ctx, hostOf(pr.Addr.String())) // for login throttling
	}
	p, err := auth.Authorize(actx, a.Authenticator, first(md, "authorization"), first(md, "x-cmsapi-username"))
	if rerr := retryStatus(ctx, err); rerr != nil {
		return nil, rerr
	}
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

// retryStatus maps the login guard's refusals: throttled is
// ResourceExhausted (429), saturated Unavailable (503, a shed request:
// gateway.ReasonOverloaded), both with a retry-after header.
func retryStatus(ctx context.Context, err error) error {
	var retry *auth.RetryError
	if !errors.As(err, &retry) {
		return nil
	}
	after := strconv.Itoa(retry.RetryAfterSeconds())
	if errors.Is(err, auth.ErrThrottled) {
		return gateway.RetryAfter(ctx, after, codes.ResourceExhausted, "too many failed logins for this user name or address")
	}
	return gateway.Overloaded(ctx, after, "too many logins are being checked; retry shortly")
}

func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
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
