// Package delivery is the transport of the Delivery group (/delivery/api):
// the published, indexed view of a branch. It translates gRPC calls to the
// domain in pkg/delivery and back; operations not built yet answer 501
// naming the operation.
//
// Caching (cache.go) is pkg/responsecache: answers are cached under the
// normalized query with the tags pkg/delivery names (objects rendered and
// resolved, lists per branch and type, the branch's meta-model) and
// evicted by the change events that touch them (Invalidator), fenced by
// the index version; HTTPCache serves hits in front of the gateway. This
// package only translates: gRPC metadata and headers (strong ETag, 304 on
// If-None-Match, Cache-Control; read-your-writes with X-Cms-Min-Version /
// X-Cms-Max-Wait) and the authorization of the HTTP fast path.
// Access (access.go): read grants on the branch or an ancestor.
//
// The change stream (changes.go, changes_sse.go) is WatchChanges over the
// process's pkg/livechanges hub, served over HTTP as server-sent events.
package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/responsecache"
	"github.com/cmsplatform/cms/pkg/search"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/proto/gen/openapi"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/indexbranches"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
)

// BasePath is the group's HTTP base path.
const BasePath = "/delivery/api"

// Options configure the group.
type Options struct {
	// Search is the engine the indexer writes. Nil: every operation
	// answers Unavailable.
	Search search.Engine
	// Cache, when set, stores the response cache (pkg/responsecache);
	// nil caches nothing.
	Cache cache.Cache
	// Layout must be the indexer's (IndexPrefix, Languages).
	Layout indexdoc.Layout
	// Files serves files and the files of binary proxy objects; nil
	// leaves those operations at 501.
	Files *files.Service
	// SourceCacheBytes bounds the decoded sources Delivery keeps
	// (pkg/delivery.Options.SourceCacheBytes).
	SourceCacheBytes int64
	// ReadWorkers, ReadQueue and ReadWait size the pool every uncached
	// read runs on, over HTTP and gRPC, with and without the response
	// cache (pkg/delivery.ReadPool: at most ReadWorkers at once, at most
	// ReadQueue others waiting in order, each at most ReadWait in all);
	// 0 workers: none.
	ReadWorkers, ReadQueue int
	ReadWait               time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// Group serves DeliveryService and DeliveryBinaryService.
type Group struct {
	api *service
	bin *binaries
}

// New returns the Delivery group.
func New(opts Options) *Group {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &service{log: opts.Logger, cache: responsecache.New(opts.Cache, opts.Logger),
		reads: delivery.NewReadPool(opts.ReadWorkers, opts.ReadQueue, opts.ReadWait)}
	if s.reads != nil {
		// Every miss of the response cache, over gRPC and HTTP, with
		// and without storage, runs through the pool (the HTTP API's
		// misses are on it already: HTTPCache).
		s.cache.WithRun(s.reads.Run)
	}
	if opts.Search != nil {
		// New fails only without an engine.
		s.dom, _ = delivery.New(delivery.Options{Search: opts.Search, Layout: opts.Layout,
			SourceCacheBytes: opts.SourceCacheBytes, Logger: opts.Logger})
		s.chains, _ = indexbranches.New(opts.Search, opts.Layout, opts.Logger)
	}
	return &Group{api: s, bin: &binaries{api: s, files: opts.Files}}
}

// Name implements app.Group.
func (g *Group) Name() string { return "delivery" }

// RegisterGRPC implements app.Group.
func (g *Group) RegisterGRPC(s grpc.ServiceRegistrar) {
	deliveryv1.RegisterDeliveryServiceServer(s, g.api)
	deliveryv1.RegisterDeliveryBinaryServiceServer(s, g.bin)
}

// RegisterGateway implements app.Group.
func (g *Group) RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := deliveryv1.RegisterDeliveryBinaryServiceHandlerClient(ctx, mux, deliveryv1.NewDeliveryBinaryServiceClient(conn)); err != nil {
		return err
	}
	client := deliveryv1.NewDeliveryServiceClient(conn)
	if err := deliveryv1.RegisterDeliveryServiceHandlerClient(ctx, mux, client); err != nil {
		return err
	}
	if err := registerChangesSSE(mux, client); err != nil {
		return err
	}
	return gateway.ServeOpenAPI(mux, BasePath, openapi.Delivery)
}

// service implements DeliveryService; methods not written yet fall through
// to the generated stub (Unimplemented → 501 naming the operation).
type service struct {
	deliveryv1.UnimplementedDeliveryServiceServer
	dom    *delivery.Service
	cache  *responsecache.Cache
	log    *slog.Logger
	chains *indexbranches.Resolver
	live   *live // the change stream; nil until LiveChanges
	// reads is the gate of every uncached read: the response cache runs
	// its misses on it (responsecache.Cache.WithRun), the binary proxy
	// lookups run on it, and HTTPCache runs the HTTP API's misses on it
	// before the gateway (the cache then finds them through the gate).
	reads *delivery.ReadPool
}

// ReadsWaiting is the number of uncached reads waiting for a worker of
// the read pool now.
func (g *Group) ReadsWaiting() int64 { return g.api.reads.Waiting() }
