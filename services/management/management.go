// Package management is the transport of the Management group
// (/apis/cms/v1): branches, objects, typed objects, comments, jobs, uploads,
// users, code generation and (ours, beyond NovaDB) webhook delivery attempts and bearer tokens. It translates gRPC calls to the domain in pkg/
// and back; operations not built yet answer 501 naming the operation.
package management

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/codegen"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/webhooks"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/proto/gen/openapi"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
)

// BasePath is the group's HTTP base path.
const BasePath = "/apis/cms/v1"

// Options configure the group.
type Options struct {
	// MaxUploadBytes caps one multipart upload request (413 beyond it).
	MaxUploadBytes int64
	// Content is the domain behind branches, objects, typed objects and
	// users (required).
	Content *content.Service
	// Files is the domain of uploads and files. Nil leaves the file
	// operations at 501.
	Files *files.Service
	// Jobs is the job domain (pkg/jobs). Nil leaves the job and job
	// input operations at 501.
	Jobs *jobs.Service
	// Webhooks reads the webhook attempt log (pkg/webhooks). Nil leaves
	// GetWebhookDeliveries at 501.
	Webhooks *webhooks.History
	// WebhookTests sends test deliveries (pkg/webhooks). Nil leaves
	// SendTestDelivery at 501.
	WebhookTests *webhooks.Tester
	// Codegen bounds the code generator (zero: codegen's defaults). The
	// generator runs on Content.
	Codegen codegen.Limits
	// Tokens issues, renews and revokes bearer tokens (pkg/auth). Nil
	// leaves the token operations at 501.
	Tokens *auth.Login
	// Logger receives server faults (nil discards).
	Logger *slog.Logger
}

// Group serves ManagementService and ManagementBinaryService.
type Group struct {
	opts Options
	api  *service
	bin  *binaries
}

// New returns the Management group.
//
// The group is registered only where its domain exists: Options.Content
// is required (a process without a store serves no Management group, and
// its operations answer 501 there). Files, Jobs and Webhooks are optional
// components: their operations answer 501 when they are not configured.
func New(opts Options) (*Group, error) {
	if opts.Content == nil {
		return nil, errors.New("management: Options.Content is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	api := &service{content: opts.Content, files: opts.Files, jobs: opts.Jobs, webhooks: opts.Webhooks, webhookTests: opts.WebhookTests, tokens: opts.Tokens, log: log,
		codegen: codegen.New(opts.Content, opts.Codegen)}
	return &Group{opts: opts, api: api, bin: &binaries{files: opts.Files, api: api}}, nil
}

// Name implements app.Group.
func (g *Group) Name() string { return "management" }

// RegisterGRPC implements app.Group.
func (g *Group) RegisterGRPC(s grpc.ServiceRegistrar) {
	managementv1.RegisterManagementServiceServer(s, g.api)
	managementv1.RegisterManagementBinaryServiceServer(s, g.bin)
}

// RegisterGateway implements app.Group.
func (g *Group) RegisterGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := managementv1.RegisterManagementBinaryServiceHandlerClient(ctx, mux, managementv1.NewManagementBinaryServiceClient(conn)); err != nil {
		return err
	}
	if err := managementv1.RegisterManagementServiceHandlerClient(ctx, mux, managementv1.NewManagementServiceClient(conn)); err != nil {
		return err
	}
	sd := managementv1.File_cms_management_v1_service_proto.Services().ByName("ManagementService")
	if err := gateway.RegisterMultipart(mux, conn, sd, gateway.MultipartLimits{MaxRequestBytes: g.opts.MaxUploadBytes}); err != nil {
		return err
	}
	return gateway.ServeOpenAPI(mux, BasePath, openapi.Management)
}

// service implements ManagementService. Every method not written yet falls
// through to the generated stub (Unimplemented → 501 naming the operation).
type service struct {
	managementv1.UnimplementedManagementServiceServer
	content  *content.Service
	files    *files.Service
	jobs     *jobs.Service
	webhooks *webhooks.History
	// webhookTests sends test deliveries.
	webhookTests *webhooks.Tester
	codegen      *codegen.Service
	tokens       *auth.Login
	log          *slog.Logger
}

// binaries implements ManagementBinaryService.
type binaries struct {
	managementv1.UnimplementedManagementBinaryServiceServer
	files *files.Service
	api   *service
}

// BranchResolvers implements app.BranchResolving: Management resolves
// branches from the store (none without the content domain: its
// branch-scoped operations are then open to administrators only).
func (g *Group) BranchResolvers() map[string]interceptors.BranchResolver {
	if g.api.content == nil {
		return nil
	}
	return map[string]interceptors.BranchResolver{
		managementv1.ManagementService_ServiceDesc.ServiceName:       g.api,
		managementv1.ManagementBinaryService_ServiceDesc.ServiceName: g.api,
	}
}
