// Package rendering is the transport of the Rendering group
// (/apis/rendering/v1): templates rendered over objects, batches,
// stylesheets, binaries and files (pkg/templates, pkg/stylesheets,
// pkg/files do the work). An operation whose domain is not configured
// answers 501 naming the operation.
package rendering

import (
	"context"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/stylesheets"
	"github.com/cmsplatform/cms/pkg/templates"
	"github.com/cmsplatform/cms/services/internal/interceptors"

	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"github.com/cmsplatform/cms/proto/gen/openapi"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
)

// BasePath is the group's HTTP base path.
const BasePath = "/apis/rendering/v1"

// Group serves RenderingService.
type Group struct {
	api      *service
	branches interceptors.BranchResolver
}

// New returns the Rendering group. It logs nothing until WithLogger.
func New() *Group { return &Group{api: &service{log: slog.New(slog.DiscardHandler)}} }

// WithLogger logs the group's internal errors and unavailable components
// to log (the process's logger, handed in by services/internal/app).
func (g *Group) WithLogger(log *slog.Logger) *Group {
	if log != nil {
		g.api.log = log
	}
	return g
}

// WithBranches sets the resolver the authorization interceptor checks the
// read grant of the branch-scoped operations with (StoreBranches: the
// store the group renders from); without one they are open to
// administrators only.
func (g *Group) WithBranches(r interceptors.BranchResolver) *Group {
	g.branches = r
	return g
}

// BranchResolvers implements app.BranchResolving.
func (g *Group) BranchResolvers() map[string]interceptors.BranchResolver {
	if g.branches == nil {
		return nil
	}
	return map[string]interceptors.BranchResolver{renderingv1.RenderingService_ServiceDesc.ServiceName: g.branches}
}

// Name implements app.Group.
func (g *Group) Name() string { return "rendering" }

// RegisterGRPC implements app.Group.
func (g *Group) RegisterGRPC(s grpc.ServiceRegistrar) {
	renderingv1.RegisterRenderingServiceServer(s, g.api)
}

// RegisterGateway implements app.Group.
func (g *Group) RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := renderingv1.RegisterRenderingServiceHandlerClient(ctx, mux, renderingv1.NewRenderingServiceClient(conn)); err != nil {
		return err
	}
	return gateway.ServeOpenAPI(mux, BasePath, openapi.Rendering)
}

// service implements RenderingService; methods not written yet fall
// through to the generated stub (Unimplemented → 501 naming the operation).
type service struct {
	renderingv1.UnimplementedRenderingServiceServer
	files  *files.Service
	bpos   BinaryProxies
	sheets *stylesheets.Service
	// templates renders templates (nil: the render operations answer 501)
	templates *templates.Service
	// separateOrigin: renders are served from an origin of their own, so
	// they need no sandboxing policy (WithSeparateOrigin).
	separateOrigin bool
	log            *slog.Logger // WithLogger
}
