package delivery

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/responsecache"
	"github.com/cmsplatform/cms/pkg/tagcache"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The transport of the response cache (pkg/responsecache) and of
// read-your-writes, as seen by clients:
//
//   - Every answer carries a strong ETag and Cache-Control
//     (responsecache.CacheControl); a matching If-None-Match answers 304.
//   - HeaderMinVersion (X-Cms-Min-Version: a change-tracking version, i.e.
//     the transaction id of a write) makes the request wait until the
//     index shows that version, at most HeaderMaxWait (X-Cms-Max-Wait:
//     milliseconds or a Go duration such as "2s"; default DefaultMaxWait,
//     at most MaxWait); if it is not reached the answer is 503. Cached
//     answers built before that version are not used for such requests.
const (
	HeaderMinVersion = "x-cms-min-version"
	HeaderMaxWait    = "x-cms-max-wait"
	DefaultMaxWait   = 5 * time.Second
	MaxWait          = 30 * time.Second
)

// serve answers one read through the response cache: op names the
// operation (with whatever of the caller the answer depends on), req is
// the request (the normalized query), build renders the answer and names
// its cache tags.
func serve[T proto.Message](ctx context.Context, s *service, op string, req proto.Message, build responsecache.Build[T]) (T, error) {
	var zero T
	if s.dom == nil {
		return zero, errNoEngine
	}
	// Wait for the asked version first: the branch the read grant is
	// checked against may itself only appear with it.
	minV, err := s.readYourWrites(ctx)
	if err != nil {
		return zero, err
	}
	// One version for the whole read: the cache's fence, the branch and
	// its model (one engine call, not three); one deadline for its engine
	// calls (timeouts.search).
	ctx, done := s.dom.OneRead(ctx)
	defer done()
	out, tag, err := responsecache.Serve(ctx, s.cache, op, req, minV, s.dom, build)
	if err != nil {
		return zero, s.toStatus(ctx, err)
	}
	if err := gateway.Conditional(ctx, tag, "cache-control", responsecache.CacheControl); err != nil {
		return zero, err
	}
	return out, nil
}

// readYourWrites waits for HeaderMinVersion, if given, and returns it (0
// when absent). A malformed HeaderMaxWait is refused even without it.
func (s *service) readYourWrites(ctx context.Context) (int64, error) {
	// The two headers, not a copy of all of them (FromIncomingContext).
	wait := DefaultMaxWait
	if ws := metadata.ValueFromIncomingContext(ctx, HeaderMaxWait); len(ws) > 0 && strings.TrimSpace(ws[0]) != "" {
		w, err := params.Wait(HeaderMaxWait, ws[0])
		if err != nil {
			return 0, status.Error(codes.InvalidArgument, gateway.ClientDetail(err))
		}
		wait = w
	}
	vs := metadata.ValueFromIncomingContext(ctx, HeaderMinVersion)
	if len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
		return 0, nil
	}
	minV, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
	if err != nil || minV < 0 {
		return 0, status.Errorf(codes.InvalidArgument, "%s must be a change-tracking version (a transaction id), got %q", HeaderMinVersion, vs[0])
	}
	if _, err := s.dom.WaitForVisible(ctx, minV, min(wait, MaxWait)); err != nil {
		if errors.Is(err, delivery.ErrVersionTimeout) {
			// Like every 503: the client may retry shortly.
			return 0, gateway.RetryAfter(ctx, gateway.RetryAfterSeconds, codes.Unavailable, gateway.ClientDetail(err))
		}
		return 0, s.toStatus(ctx, err)
	}
	return minV, nil
}

// HTTPCache returns middleware for the HTTP server that answers cached
// Delivery GETs directly, without the gateway's gRPC hop and JSON
// encoding (responsecache.Cache.HTTP).
//
// It serves only what the normal path would serve the same caller: it
// authenticates with authn (the authenticator of the auth interceptor)
// and checks read access to the branch; anything else (no or bad
// credentials, X-CmsApi-Username, X-Cms-Min-Version or X-Cms-Max-Wait, other methods or
// paths, misses) goes to next unchanged, which answers as usual. Hits skip
// the gRPC interceptors (request logging and metrics).
func (g *Group) HTTPCache(authn auth.Authenticator) func(http.Handler) http.Handler {
	if g.api.dom == nil || authn == nil {
		return func(next http.Handler) http.Handler { return next }
	}
	// Every cacheable path is a branch-scoped Delivery read, checked with
	// the declared access of Get (READ on its branch): a caller who may not
	// read the branch is refused here and goes the normal path, where a list
	// answers it as for a branch that does not exist (Access.list), never
	// from a stored answer of the branch.
	az := &interceptors.Authz{Resolvers: g.BranchResolvers()}
	return g.api.cache.HTTP(func(r *http.Request) (context.Context, bool) {
		branch, ok := cacheablePath(r)
		if !ok {
			return nil, false
		}
		p, err := auth.Authorize(r.Context(), authn, r.Header.Get("Authorization"), "")
		if err != nil {
			return nil, false
		}
		ctx := auth.WithPrincipal(r.Context(), p)
		if err := az.Check(ctx, deliveryv1.DeliveryService_Get_FullMethodName, &deliveryv1.GetRequest{Branch: branch}); err != nil {
			return nil, false
		}
		return ctx, true
	}, g.runRead())
}

// runRead is how the HTTP cache runs a miss: on the read pool, or on the
// request's goroutine (nil) without one. The deep part of the read (the
// gateway, the in-process call, serve) then runs on the pool's
// goroutine; serve finds the read through the gate already.
func (g *Group) runRead() func(context.Context, func(context.Context)) {
	if g.api.reads == nil {
		return nil
	}
	return g.api.reads.Run
}

// cacheablePath reports whether r may be answered from the HTTP cache and
// returns its branch parameter. The branch list is not: it depends on the
// caller's grants, which the URL does not name; nor are the files of
// binary proxy objects, streamed and validated by their content hash.
func cacheablePath(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet || r.Header.Get(HeaderMinVersion) != "" || r.Header.Get(HeaderMaxWait) != "" || r.Header.Get("X-CmsApi-Username") != "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, BasePath+"/branches")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok || rest == "" {
		return "", false
	}
	branch, sub, _ := strings.Cut(rest, "/")
	if strings.HasPrefix(sub, "files/") || strings.HasPrefix(sub, "thumbnails/") || sub == "changes" {
		return "", false // streamed binaries and the change stream: never copied into the cache
	}
	return branch, true
}

// Invalidator returns the cache invalidator of the group, consuming with
// the durable consumer durable (see tagcache.Invalidator.PerProcess
// for a per-process cache). Run it as a worker of the delivery target.
// With no cache or no search engine configured, Run idles.
func (g *Group) Invalidator(bus events.Consumer, durable string) *tagcache.Invalidator {
	var src responsecache.Source
	if g.api.dom != nil {
		src = g.api.dom
	}
	return g.api.cache.Invalidator(bus, durable, src)
}

// Stats returns the counters of the group's response cache.
func (g *Group) Stats() responsecache.Stats { return g.api.cache.Stats() }
