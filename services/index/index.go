// Package index is the transport of the Index group (/apis/index/v1): POST
// search, count and occurrences over objects, suggestions, work items and
// matchStrings, objectXmlLinkCount, and the comment search, count and
// occurrences, translated to and from pkg/indexquery.
package index

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexquery"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	"github.com/cmsplatform/cms/proto/gen/openapi"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/indexbranches"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// BasePath is the group's HTTP base path.
const BasePath = "/apis/index/v1"

// Options are what the Index group needs.
type Options struct {
	// Search is the engine the indexer writes (required).
	Search search.Engine
	// Layout must be the indexer's (same IndexPrefix and Languages), so
	// both sides name the same indexes and fields.
	Layout indexdoc.Layout
	// Logger; nil discards.
	Logger *slog.Logger
}

// Group serves IndexService.
type Group struct{ api *service }

// New returns the Index group.
func New(opts Options) (*Group, error) {
	if opts.Search == nil {
		return nil, errors.New("index: Options.Search is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	br, err := indexbranches.New(opts.Search, opts.Layout, log)
	if err != nil {
		return nil, err
	}
	q, err := indexquery.New(opts.Search, indexquery.Options{Layout: opts.Layout, Logger: log, Branches: br})
	if err != nil {
		return nil, err
	}
	return &Group{api: &service{q: q, branches: br, log: log}}, nil
}

// BranchResolvers implements app.BranchResolving: every Index operation
// on a branch declares a read grant on it (cms.options.v1.access), checked
// against chains read from the index.
func (g *Group) BranchResolvers() map[string]interceptors.BranchResolver {
	return map[string]interceptors.BranchResolver{indexv1.IndexService_ServiceDesc.ServiceName: branchResolver{g.api}}
}

// branchResolver resolves Index branches from the index after the
// request's minChangeTrackingVersion is reached.
type branchResolver struct{ s *service }

func (r branchResolver) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	return r.s.branches.BranchChain(ctx, branch)
}

// ReadYourWrites implements interceptors.ReadYourWritesResolver with the
// request's fields min_change_tracking_version and max_wait_time.
func (r branchResolver) ReadYourWrites(ctx context.Context, req proto.Message) error {
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	minV, wait := fields.ByName("min_change_tracking_version"), fields.ByName("max_wait_time")
	if minV == nil || !m.Has(minV) {
		return nil
	}
	v := m.Get(minV).Int()
	f := indexquery.Freshness{MinVersion: &v}
	if wait != nil && m.Has(wait) {
		f.MaxWait = m.Get(wait).String()
	}
	if _, err := r.s.q.Wait(ctx, f); err != nil {
		return r.s.toStatus(ctx, err)
	}
	return nil
}

// branchID reads a request's branch: plain digits are the id (an unknown
// id finds nothing); anything else (the alias "draft", an ApiIdentifier,
// a GUID) is resolved from the indexed branch objects, the alias by
// pkg/params.BranchAlias like in every group. A branch that does not
// exist is 0, which has no objects and no comments: every operation on a
// branch is a list (declared list), and the list of a branch that does not
// exist is empty, for every caller (as NovaDB answers).
func (s *service) branchID(ctx context.Context, branch string) (int64, error) {
	if id, ok := params.ID(branch); ok || branch == "" {
		return id, nil
	}
	id, err := s.branches.Branch(ctx, branch)
	if status.Code(err) == codes.NotFound {
		return 0, nil
	}
	return id, err
}

// Name implements app.Group.
func (g *Group) Name() string { return "index" }

// RegisterGRPC implements app.Group.
func (g *Group) RegisterGRPC(s grpc.ServiceRegistrar) { indexv1.RegisterIndexServiceServer(s, g.api) }

// RegisterGateway implements app.Group.
func (g *Group) RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := indexv1.RegisterIndexServiceHandlerClient(ctx, mux, indexv1.NewIndexServiceClient(conn)); err != nil {
		return err
	}
	return gateway.ServeOpenAPI(mux, BasePath, openapi.Index)
}

// service implements IndexService; an operation without a method here
// falls through to the generated stub (Unimplemented → 501).
type service struct {
	indexv1.UnimplementedIndexServiceServer
	q        *indexquery.Service
	branches *indexbranches.Resolver
	log      *slog.Logger
}
