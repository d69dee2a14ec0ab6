package rendering

import (
	"context"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/files"
	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"github.com/cmsplatform/cms/services/internal/filestream"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
)

// BinaryProxies reads binary proxy objects from the store the group
// renders from (pkg/content.Service).
type BinaryProxies interface {
	BinaryProxy(ctx context.Context, branch, id string) (content.BinaryProxy, error)
}

// WithFiles serves the file operations from svc; bpos, when set, reads the
// binary proxy objects of GetBpoExternalBinary. Without them those
// operations answer 501.
func (g *Group) WithFiles(svc *files.Service, bpos BinaryProxies) *Group {
	g.api.files, g.api.bpos = svc, bpos
	return g
}

func (s *service) toStatus(ctx context.Context, err error) error {
	return gateway.DomainStatus(ctx, s.log, "rendering", err)
}

// GetBinary implements GetBinaryAsync (GET /binaries/{md5}): the content
// stored under the MD5, as application/octet-stream.
func (s *service) GetBinary(req *renderingv1.GetBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.files == nil {
		return s.UnimplementedRenderingServiceServer.GetBinary(req, stream)
	}
	ctx := stream.Context()
	sum, err := files.ParseMD5(req.GetMd5())
	if err != nil {
		return s.toStatus(ctx, err)
	}
	return s.toStatus(ctx, filestream.ServeFile(ctx, s.files, files.Name{MD5: sum}, stream))
}

// GetExternalBinary implements GetExternalBinaryAsync (GET /files/{name}).
func (s *service) GetExternalBinary(req *renderingv1.GetExternalBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.files == nil {
		return s.UnimplementedRenderingServiceServer.GetExternalBinary(req, stream)
	}
	ctx := stream.Context()
	return s.toStatus(ctx, filestream.ServeName(ctx, s.files, req.GetName(), stream))
}

// GetBpoExternalBinary implements GetBpoExternalBinaryAsync
// (GET /branches/{branchId}/files/{bpoId}).
func (s *service) GetBpoExternalBinary(req *renderingv1.GetBpoExternalBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if s.files == nil || s.bpos == nil {
		return s.UnimplementedRenderingServiceServer.GetBpoExternalBinary(req, stream)
	}
	ctx := stream.Context()
	bp, err := s.bpos.BinaryProxy(ctx, req.GetBranchId(), strconv.FormatInt(int64(req.GetBpoId()), 10))
	if err != nil {
		return s.toStatus(ctx, err)
	}
	n, err := files.ProxyName(bp.Hash, bp.Ext)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	return s.toStatus(ctx, filestream.ServeFile(ctx, s.files, n, stream))
}
