package edge

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// WWWAuthenticate is the challenge of every 401; a refused bearer token
// adds BearerChallenge after it.
const (
	// MaxLoginBodyBytes bounds the body of a login path (the token
	// endpoint's user name and password).
	MaxLoginBodyBytes = 4 << 10
	WWWAuthenticate   = `Basic realm="cms", charset="UTF-8"`
	BearerChallenge   = `Bearer realm="cms", error="invalid_token"` //nolint:gosec // G101: a challenge, not a credential
)

// Authenticate checks the credentials of every request under one of the
// protected base paths before it is routed or its body read: without
// valid credentials the answer is 401 with a Basic challenge whatever the
// path or method (unknown paths and wrong methods reveal nothing to
// anonymous callers). GET and HEAD of the public paths stay open. The
// client address (the connection's, proxies are not trusted) goes into the
// context for login throttling: 429 with Retry-After after too many
// failures, 503 with Retry-After when password checks are saturated. On
// success the principal is in the request context; the gRPC auth
// interceptor checks the same credentials again, a cache hit. Credentials
// are HTTP Basic or a bearer token (pkg/auth token.go). A POST to one of
// the login paths (the token endpoint, which takes credentials in its
// body) passes unauthenticated, with the client address in the context
// for the guard that throttles it. A POST to one of the renew paths (the
// token renewal) is authenticated as a renewal (auth.WithRenewal).
func Authenticate(authn auth.Authenticator, protected, public, login, renew []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !underAny(r.URL.Path, protected) ||
			((r.Method == http.MethodGet || r.Method == http.MethodHead) && slices.Contains(public, r.URL.Path)) {
			next.ServeHTTP(w, r)
			return
		}
		ctx := auth.WithClientAddr(r.Context(), clientIP(r.RemoteAddr))
		if r.Method == http.MethodPost && slices.Contains(login, r.URL.Path) {
			// Credentials only: a small body, refused at once when it
			// declares more (no anonymous caller holds a connection
			// open with a large slow body), cut while reading else.
			if r.ContentLength > MaxLoginBodyBytes {
				w.Header().Set("Connection", "close")
				gateway.WriteProblem(w, gateway.Problem{Type: "about:blank",
					Title: http.StatusText(http.StatusRequestEntityTooLarge), Status: http.StatusRequestEntityTooLarge,
					Detail: "a login body is at most " + strconv.Itoa(MaxLoginBodyBytes) + " bytes",
					Reason: gateway.ReasonPayloadTooLarge, Instance: r.URL.Path})
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, MaxLoginBodyBytes)
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		if r.Method == http.MethodPost && slices.Contains(renew, r.URL.Path) {
			ctx = auth.WithRenewal(ctx)
		}
		p, err := auth.Authorize(ctx, authn, r.Header.Get("Authorization"), r.Header.Get("X-CmsApi-Username"))
		var retry *auth.RetryError
		var down *component.UnavailableError
		switch {
		case err == nil:
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(ctx, p)))
		case errors.Is(err, auth.ErrNoCredentials):
			w.Header().Set("WWW-Authenticate", WWWAuthenticate)
			problem(w, r, http.StatusUnauthorized, "this operation needs HTTP Basic credentials or a bearer token")
		case errors.Is(err, auth.ErrBadToken):
			w.Header().Set("WWW-Authenticate", WWWAuthenticate)
			w.Header().Add("WWW-Authenticate", BearerChallenge)
			problem(w, r, http.StatusUnauthorized, auth.TokenRefusal(err))
		case errors.Is(err, auth.ErrBadCredentials):
			w.Header().Set("WWW-Authenticate", WWWAuthenticate)
			problem(w, r, http.StatusUnauthorized, "invalid user name or password")
		case errors.Is(err, auth.ErrForbidden):
			problem(w, r, http.StatusForbidden, "only internal callers may act for another user (X-CmsApi-Username)")
		case errors.As(err, &retry) && errors.Is(err, auth.ErrThrottled):
			w.Header().Set("Retry-After", strconv.Itoa(retry.RetryAfterSeconds()))
			problem(w, r, http.StatusTooManyRequests, "too many failed logins for this user name or address; retry after "+
				strconv.Itoa(retry.RetryAfterSeconds())+"s")
		case errors.As(err, &retry):
			// Shed: an expected answer, counted, not logged one by one.
			gateway.MarkShed(r.Context(), "login")
			w.Header().Set("Retry-After", strconv.Itoa(retry.RetryAfterSeconds()))
			gateway.WriteProblem(w, gateway.Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
				Status: http.StatusServiceUnavailable, Detail: "too many logins are being checked; retry shortly",
				Reason: gateway.ReasonOverloaded, Instance: r.URL.Path})
		case errors.As(err, &down):
			// The user store is down or slow: the client may retry.
			w.Header().Set("Retry-After", gateway.RetryAfterSeconds)
			problem(w, r, http.StatusServiceUnavailable, down.Component+" is unavailable; retry shortly")
		case r.Context().Err() != nil:
			// The client went away while waiting for a password check.
			problem(w, r, http.StatusServiceUnavailable, "request canceled")
		default:
			gateway.RecordFault(r.Context(), "authentication: "+err.Error())
			problem(w, r, http.StatusInternalServerError, "internal error; the server log has the cause under the requestId")
		}
	})
}

func underAny(path string, bases []string) bool {
	for _, b := range bases {
		if path == b || strings.HasPrefix(path, b+"/") {
			return true
		}
	}
	return false
}

func clientIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
