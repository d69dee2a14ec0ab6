// Package index is the transport of the Index group (/apis/index/v1): POST
// search, count and occurrences over objects and comments, XML link counts,
// work items and matchStrings. Operations not built yet answer 501 naming
// the operation.
package index

import (
	"context"

	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	"github.com/cmsplatform/cms/proto/gen/openapi"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
)

// BasePath is the group's HTTP base path.
const BasePath = "/apis/index/v1"

// Group serves IndexService.
type Group struct{ api *service }

// New returns the Index group.
func New() *Group { return &Group{api: &service{}} }

// Name implements app.Group.
func (g *Group) Name() string { return "index" }

// RegisterGRPC implements app.Group.
func (g *Group) RegisterGRPC(s *grpc.Server) { indexv1.RegisterIndexServiceServer(s, g.api) }

// RegisterGateway implements app.Group.
func (g *Group) RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := indexv1.RegisterIndexServiceHandlerClient(ctx, mux, indexv1.NewIndexServiceClient(conn)); err != nil {
		return err
	}
	return gateway.ServeOpenAPI(mux, BasePath, openapi.Index)
}

// service implements IndexService; methods not written yet fall through to
// the generated stub (Unimplemented → 501 naming the operation).
type service struct {
	indexv1.UnimplementedIndexServiceServer
}
