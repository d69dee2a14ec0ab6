// Package edge holds the HTTP middlewares in front of the REST gateway,
// one file per concern. Handler chains them in this order:
//
//  0. CloseUnreadBodies: an answer started before the body was read to
//     its end (a 401 on the headers) closes the connection instead of
//     waiting for the rest of the body.
//  1. RequestID: honour a sane X-Request-Id or generate one; it is
//     forwarded to the services, written on the answer and carried by
//     every ProblemDetails.
//  2. LogRequests: every 5xx answer (and every panic) is logged at ERROR
//     (a 503 at WARN) with the request id and, where the gateway knows
//     it, the cause; expected answers (shed requests, /readyz not ready)
//     are not; with the access log every request gets one compact line.
//  3. ValidInput: path, query and header values must be valid UTF-8, and
//     the headers forwarded to the services printable ASCII (400).
//  4. CORS (gateway.CORS): preflights are answered before authentication.
//  5. Authenticate: under the API base paths every request needs valid
//     credentials (401 whatever the path or method), checked on the
//     headers before any byte of the body is read or the request routed;
//     login throttling answers 429. The token endpoint (Login) takes its
//     credentials in the body and checks them itself.
//  6. LimitBodies: bodies are read through a limit (413) and a JSON depth
//     check (400); upload routes raise the limit (gateway.RaiseBodyLimit).
package edge

import (
	"log/slog"
	"net/http"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// Config is what the edge needs.
type Config struct {
	Log *slog.Logger
	// Authenticator checks credentials (the cached, guarded one the gRPC
	// auth interceptor uses too, so the second check is a cache hit).
	Authenticator auth.Authenticator
	// Protected are the base paths whose requests need credentials.
	Protected []string
	// Public are paths under Protected open to GET and HEAD without
	// credentials (the OpenAPI documents).
	Public []string
	// Login are paths under Protected open to POST without credentials:
	// they take credentials in the body and check them (the token
	// endpoint).
	Login []string
	// Renew are the paths whose POST authenticates a renewal
	// (auth.WithRenewal: the token renewal endpoint).
	Renew []string
	// Body bounds request bodies.
	Body gateway.BodyLimits
	// CORS says which browser origins may call the API.
	CORS gateway.CORSConfig
	// AccessLog logs one compact line per request.
	AccessLog bool
	// Sheds counts the requests the edge sheds (password checks
	// saturated); nil: not counted.
	Sheds *gateway.Sheds
}

// Handler wraps next (the root mux: API, health, metrics) with the edge
// middlewares in the order of the package comment.
func Handler(cfg Config, next http.Handler) http.Handler {
	h := LimitBodies(cfg.Body, next)
	h = Authenticate(cfg.Authenticator, cfg.Protected, cfg.Public, cfg.Login, cfg.Renew, h)
	h = gateway.CORS(cfg.CORS, h)
	h = ValidInput(h)
	h = LogRequests(cfg.Log, cfg.AccessLog, cfg.Sheds, h)
	return RequestID(CloseUnreadBodies(h))
}

func problem(w http.ResponseWriter, r *http.Request, code int, detail string) {
	gateway.WriteProblem(w, gateway.Problem{Type: "about:blank", Title: http.StatusText(code), Status: code,
		Detail: detail, Instance: r.URL.Path})
}
