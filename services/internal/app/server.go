package app

import (
	"context"
	"errors"
	"fmt"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/memlimit"
	"github.com/cmsplatform/cms/services/delivery"
	"github.com/cmsplatform/cms/services/index"
	"github.com/cmsplatform/cms/services/internal/edge"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"github.com/cmsplatform/cms/services/internal/studio"
	"github.com/cmsplatform/cms/services/management"
	"github.com/cmsplatform/cms/services/rendering"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// Group is one API group's transport: its gRPC service and REST facade.
type Group interface {
	// Name is the target name ("management" …).
	Name() string
	// RegisterGRPC registers the service on s.
	RegisterGRPC(s grpc.ServiceRegistrar)
	// RegisterGateway registers the REST routes, which call the service over conn.
	RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error
}

// Server is a completed configuration: components are open, nothing listens.
type Server struct {
	cfg       Config
	log       *slog.Logger
	comps     *Components
	groups    []Group
	workers   []func(context.Context) error
	registry  *prometheus.Registry
	grpc      *grpc.Server
	health    *health.Server
	grpcLn    net.Listener
	httpLn    net.Listener
	httpSrv   *http.Server
	readyOnce chan struct{}
	authn     *auth.Login
	draining  atomic.Bool // set when shutdown begins (readiness.go)
	// readyDetails add lines to /readyz that do not decide readiness
	// (the indexer's lag).
	readyDetails []func() string
	// readyChecks decide readiness beside the component pings (the
	// indexer waiting for an unavailable component).
	readyChecks []func() error
	// inProcess serves the gateway's unary calls without the loopback hop.
	inProcess *gateway.InProcess
	// sheds counts the requests refused under overload and logs their
	// summary.
	sheds *gateway.Sheds
}

// recvLimits are the HTTP body limits of the operations, which their gRPC
// requests keep too (README "Bodies"): a unary or server-streaming request
// message at most edge.maxBodyBytes, the messages of an upload stream at
// most maxUploadBytes together.
func recvLimits(cfg Config) interceptors.RecvLimits {
	l := interceptors.RecvLimits{Upload: cfg.MaxUploadBytes}
	if int64(maxRecvMsgSize(cfg)) > cfg.Edge.MaxBodyBytes {
		l.Message = cfg.Edge.MaxBodyBytes // else the server's own limit holds it
	}
	return l
}

// maxRecvMsgSize bounds one request message, over the network and in
// process, before it is decoded: the body limit, or one upload chunk when
// that is larger (recvLimits then holds the body limit per operation).
func maxRecvMsgSize(cfg Config) int {
	return int(min(max(cfg.Edge.MaxBodyBytes, gateway.MultipartChunkSize+64<<10), math.MaxInt32))
}

// Complete validates cfg, opens the components the targets need and builds
// the servers. Listeners are bound here so callers (tests) learn the ports.
func Complete(ctx context.Context, cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	s := &Server{cfg: cfg, log: log, registry: prometheus.NewRegistry(), readyOnce: make(chan struct{})}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	comps, err := OpenComponents(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	s.comps = comps
	registerComponentMetrics(s.registry, comps, cfg.Timeouts.Ready)
	if comps.bleve != nil {
		registerColumnMetrics(s.registry, comps.bleve)
	}
	authn, err := newAuthenticator(ctx, cfg, comps, log)
	if err != nil {
		comps.Close()
		return nil, err
	}
	s.authn = authn
	if tk := authn.Tokens(); tk != nil {
		registerTokenMetrics(s.registry, tk)
	}
	if s.groups, s.workers, err = buildTargets(ctx, cfg, comps, log, s.registry, authn,
		func(d func() string) { s.readyDetails = append(s.readyDetails, d) },
		func(c func() error) { s.readyChecks = append(s.readyChecks, c) }); err != nil {
		comps.Close()
		return nil, err
	}
	metrics := interceptors.NewMetrics(s.registry)
	s.sheds = gateway.NewSheds(log, cfg.Queries.ShedLogInterval, shedGroups...)
	registerShedMetrics(s.registry, s.sheds)
	obs := interceptors.Observer{Log: log, Metrics: metrics, Sheds: s.sheds, AccessLog: cfg.AccessLog}
	rec := interceptors.Recovery{Log: log}
	public := []string{"/grpc.health.v1.", "/grpc.reflection."}
	au := interceptors.Auth{Authenticator: authn, Public: public, Renewal: []string{managementv1.ManagementService_RenewToken_FullMethodName}}
	az := &interceptors.Authz{Resolvers: branchResolvers(s.groups), Public: public}
	lim := recvLimits(cfg)
	unary := []grpc.UnaryServerInterceptor{rec.Unary, obs.Unary, lim.Unary, au.Unary, az.Unary, interceptors.UnaryNotImplemented}
	stream := []grpc.StreamServerInterceptor{rec.Stream, obs.Stream, lim.Stream, au.Stream, az.Stream, interceptors.StreamNotImplemented}
	s.grpc = grpc.NewServer(
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		grpc.MaxRecvMsgSize(maxRecvMsgSize(cfg)),
	)
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.inProcess = gateway.NewInProcess(s.grpc, maxRecvMsgSize(cfg), unary...).WithStreams(stream...)
	for _, g := range s.groups {
		g.RegisterGRPC(s.inProcess)
	}
	if err := s.listen(ctx); err != nil {
		comps.Close()
		return nil, err
	}
	return s, nil
}

// BranchResolving is a Group whose services declare branch permissions:
// it resolves their branches for the authorization interceptor.
type BranchResolving interface {
	// BranchResolvers maps each service's full name to its resolver.
	BranchResolvers() map[string]interceptors.BranchResolver
}

// branchResolvers collects the resolvers of the groups.
func branchResolvers(groups []Group) map[string]interceptors.BranchResolver {
	out := map[string]interceptors.BranchResolver{}
	for _, g := range groups {
		if r, ok := g.(BranchResolving); ok {
			maps.Copy(out, r.BranchResolvers())
		}
	}
	return out
}

func (s *Server) listen(ctx context.Context) error {
	var lc net.ListenConfig
	var err error
	if s.grpcLn, err = lc.Listen(ctx, "tcp", s.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("grpc listen %s: %w", s.cfg.GRPCAddr, err)
	}
	if s.httpLn, err = lc.Listen(ctx, "tcp", s.cfg.HTTPAddr); err != nil {
		s.grpcLn.Close()
		return fmt.Errorf("http listen %s: %w", s.cfg.HTTPAddr, err)
	}
	return nil
}

// HTTPAddr is the bound HTTP address (useful with port 0).
func (s *Server) HTTPAddr() string { return s.httpLn.Addr().String() }

// GRPCAddr is the bound gRPC address.
func (s *Server) GRPCAddr() string { return s.grpcLn.Addr().String() }

// Run serves until ctx ends, then shuts down: it reports not-ready and
// keeps serving for DrainDelay, closes the listeners and drains in-flight
// requests within ShutdownTimeout, then stops the workers and closes the
// components in reverse order.
func (s *Server) Run(ctx context.Context) error {
	defer s.comps.Close()
	// The gateway receives answers of any size from its own server, so a
	// "message larger than max" status always means a too-large request.
	conn, err := grpc.NewClient(loopback(s.GRPCAddr()), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)))
	if err != nil {
		return fmt.Errorf("gateway connection: %w", err)
	}
	defer conn.Close()
	s.inProcess.ServeStreams(conn, s.grpcLn.Addr())
	handler, err := s.httpHandler(ctx, s.inProcess)
	if err != nil {
		return err
	}
	e := s.cfg.Edge
	s.httpSrv = &http.Server{Handler: handler, ReadHeaderTimeout: e.ReadHeaderTimeout, ReadTimeout: e.ReadTimeout,
		WriteTimeout: e.WriteTimeout, IdleTimeout: e.IdleTimeout}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.grpc.Serve(s.grpcLn) })
	g.Go(func() error {
		if err := s.httpSrv.Serve(s.httpLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	// Workers (relay, indexer, invalidator) outlive the servers' drain:
	// in-flight requests may wait for them (read-your-writes).
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	for _, w := range s.workers {
		g.Go(func() error { return w(wctx) })
	}
	g.Go(func() error { return s.sheds.Run(wctx) })
	// A quiet process gives back the garbage of its last work (startup
	// included) instead of holding it up to the collector's goal.
	g.Go(func() error { memlimit.ReleaseWhenIdle(wctx, memlimit.IdleOptions{}); return nil })
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	close(s.readyOnce)
	s.log.Info("cms serving", "target", s.cfg.Target, "http", s.HTTPAddr(), "grpc", s.GRPCAddr(),
		"store", s.cfg.Store.Engine, "events", s.cfg.Events.Engine, "search", s.cfg.Search.Engine,
		"cache", s.cfg.Cache.Engine, "blobs", s.cfg.Blobs.Engine)
	g.Go(func() error {
		<-gctx.Done()
		s.shutdown()
		stopWorkers()
		return nil
	})
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func (s *Server) shutdown() {
	s.log.Info("shutting down", "drainDelay", s.cfg.DrainDelay, "timeout", s.cfg.ShutdownTimeout)
	s.startDraining()
	s.health.Shutdown()
	// Long-lived streams (Delivery's change stream) end now: the server
	// would wait for them until the shutdown timeout.
	for _, g := range s.groups {
		if c, ok := g.(interface{ CloseStreams() }); ok {
			c.CloseStreams()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.httpSrv.Shutdown(ctx); err != nil {
		s.log.Warn("http shutdown", "err", err)
	}
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-ctx.Done():
		s.grpc.Stop()
	}
}

// Ready is closed once Run serves.
func (s *Server) Ready() <-chan struct{} { return s.readyOnce }

func (s *Server) httpHandler(ctx context.Context, conn grpc.ClientConnInterface) (http.Handler, error) {
	mux := gateway.NewServeMux()
	for _, g := range s.groups {
		if err := g.RegisterGateway(ctx, mux, conn); err != nil {
			return nil, fmt.Errorf("%s gateway: %w", g.Name(), err)
		}
	}
	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	root.HandleFunc("GET /readyz", s.readyz)
	// OpenMetrics when the scraper asks for it (Prometheus does when
	// exemplar storage is on): it carries the latency histograms' exemplars,
	// the trace ids of sampled calls; the plain text format otherwise.
	root.Handle("GET /metrics", promhttp.HandlerFor(s.registry,
		promhttp.HandlerOpts{Registry: s.registry, EnableOpenMetrics: true}))
	// A group may serve cached answers in front of the gateway (Delivery
	// does, authenticating and authorizing with the same authenticator).
	var api http.Handler = mux
	for _, g := range s.groups {
		if hc, ok := g.(interface {
			HTTPCache(auth.Authenticator) func(http.Handler) http.Handler
		}); ok {
			api = hc.HTTPCache(s.authn)(api)
		}
	}
	root.Handle("/", api)
	if s.serves("management") {
		// The studio is served by every process that serves Management.
		switch st, err := studio.New(); {
		case errors.Is(err, studio.ErrNotBuiltIn):
			s.log.Info("no studio in this binary (built with the tag nostudio)")
		case err != nil:
			return nil, err
		default:
			root.Handle(studio.Path, st)
			root.Handle(strings.TrimSuffix(studio.Path, "/"), st)
		}
	}
	return edge.Handler(edge.Config{
		Log: s.log, Authenticator: s.authn,
		Protected: apiBasePaths,
		Public:    openAPIPaths(),
		Login:     []string{management.BasePath + "/auth/token"},
		Renew:     []string{management.BasePath + "/auth/token/renew"},
		Body: gateway.BodyLimits{MaxBytes: s.cfg.Edge.MaxBodyBytes, MaxDepth: s.cfg.Edge.MaxJSONDepth,
			UploadReadTimeout: s.cfg.Edge.UploadReadTimeout},
		CORS:      gateway.CORSConfig{AllowedOrigins: s.cfg.CORSOrigins},
		AccessLog: s.cfg.AccessLog, Sheds: s.sheds,
	}, root), nil
}

// serves: the process serves the group of that name.
func (s *Server) serves(group string) bool {
	for _, g := range s.groups {
		if g.Name() == group {
			return true
		}
	}
	return false
}

// apiBasePaths are the four groups' base paths: every request under them
// needs credentials, whichever groups this process serves.
var apiBasePaths = []string{management.BasePath, delivery.BasePath, rendering.BasePath, index.BasePath}

// shedGroups label cms_shed_total: the four API groups and the HTTP
// edge's password checks.
var shedGroups = []string{"management", "delivery", "rendering", "index", "login"}

// openAPIPaths are the served OpenAPI documents, public.
func openAPIPaths() []string {
	paths := make([]string, len(apiBasePaths))
	for i, b := range apiBasePaths {
		paths[i] = gateway.OpenAPIPath(b)
	}
	return paths
}

// loopback turns a listen address into one a client can dial.
func loopback(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
