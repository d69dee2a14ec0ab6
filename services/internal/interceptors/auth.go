package interceptors

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Auth authenticates every call with the HTTP Basic credentials or the
// bearer token in the authorization metadata (the gateway forwards the
// header). Methods whose full name starts with one of Public (health
// checks, reflection) are open; methods declaring PERMISSION_CREDENTIALS
// (IssueToken) check the credentials they are given themselves.
type Auth struct {
	Authenticator auth.Authenticator
	Public        []string
	// Renewal are the methods that renew a bearer token: their
	// authentication is a renewal (auth.WithRenewal).
	Renewal []string
}

// Challenges of a 401: Basic for a missing or wrong password, Bearer with
// error="invalid_token" for a refused token (RFC 6750).
const (
	BasicChallenge  = `Basic realm="cms", charset="UTF-8"`
	BearerChallenge = `Bearer realm="cms", error="invalid_token"` //nolint:gosec // G101: a challenge, not a credential
)

func (a Auth) authorize(ctx context.Context, method string) (context.Context, error) {
	for _, p := range a.Public {
		if strings.HasPrefix(method, p) {
			return ctx, nil
		}
	}
	if auth.ClientAddr(ctx) == "" { // the HTTP edge put the client's in (in-process calls)
		if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
			ctx = auth.WithClientAddr(ctx, hostOf(pr.Addr.String())) // for login throttling
		}
	}
	if CredentialsMethod(method) {
		return ctx, nil
	}
	if _, ok := auth.FromContext(ctx); ok {
		// A call of the REST gateway in process: the HTTP edge
		// authenticated these very headers (a context value never comes
		// over the network), so a bearer token is not read from the store
		// twice.
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if slices.Contains(a.Renewal, method) {
		ctx = auth.WithRenewal(ctx)
	}
	p, err := auth.Authorize(ctx, a.Authenticator, first(md, "authorization"), first(md, "x-cmsapi-username"))
	if err != nil {
		return nil, AuthStatus(ctx, err)
	}
	return auth.WithPrincipal(ctx, p), nil
}

// CredentialsMethod reports whether fullMethod declares
// PERMISSION_CREDENTIALS.
func CredentialsMethod(fullMethod string) bool {
	acc, _ := methodAccess(fullMethod)
	return acc.GetPermission() == optionsv1.Permission_PERMISSION_CREDENTIALS
}

// AuthStatus maps an authentication error of pkg/auth to its status: 401
// with a challenge, 403 for an refused X-CmsApi-Username, 429 or 503 with
// retry-after from the login guard, 503 when the user store is down.
func AuthStatus(ctx context.Context, err error) error {
	if rerr := retryStatus(ctx, err); rerr != nil {
		return rerr
	}
	switch {
	case errors.Is(err, auth.ErrNoCredentials):
		_ = grpc.SetHeader(ctx, metadata.Pairs("www-authenticate", BasicChallenge))
		return status.Error(codes.Unauthenticated, "this operation needs HTTP Basic credentials or a bearer token")
	case errors.Is(err, auth.ErrBadToken):
		_ = grpc.SetHeader(ctx, metadata.Pairs("www-authenticate", BasicChallenge, "www-authenticate", BearerChallenge))
		return status.Error(codes.Unauthenticated, auth.TokenRefusal(err))
	case errors.Is(err, auth.ErrBadCredentials):
		_ = grpc.SetHeader(ctx, metadata.Pairs("www-authenticate", BasicChallenge))
		return status.Error(codes.Unauthenticated, "invalid user name or password")
	case errors.Is(err, auth.ErrForbidden):
		return status.Error(codes.PermissionDenied, "only internal callers may act for another user (X-CmsApi-Username)")
	}
	if st := gateway.Unavailable(ctx, err); st != nil {
		return st // the user store is down or slow: 503, not 500
	}
	return status.Error(codes.Internal, "authentication failed")
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
