package delivery

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/files"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/filestream"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// binaries implements DeliveryBinaryService: files by name, the files and
// thumbnails of binary proxy objects, and "database binaries", which are
// the files of binary proxy objects of the default branch by object id.
type binaries struct {
	deliveryv1.UnimplementedDeliveryBinaryServiceServer
	api   *service
	files *files.Service
}

// GetExternalBinary implements Delivery_GetExternalBinary (GET /files/{name}).
func (b *binaries) GetExternalBinary(req *deliveryv1.GetExternalBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil {
		return b.UnimplementedDeliveryBinaryServiceServer.GetExternalBinary(req, stream)
	}
	ctx := stream.Context()
	return b.api.toStatus(ctx, filestream.ServeName(ctx, b.files, req.GetName(), stream))
}

// GetBpoExternalBinary implements Delivery_GetBpoExternalBinary
// (GET /branches/{branch}/files/{id}): the file of a binary proxy object,
// by id or ApiIdentifier (422 when not unique).
func (b *binaries) GetBpoExternalBinary(req *deliveryv1.GetBpoExternalBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil || b.api.dom == nil {
		return b.UnimplementedDeliveryBinaryServiceServer.GetBpoExternalBinary(req, stream)
	}
	ctx := stream.Context()
	return b.api.toStatus(ctx, b.serveProxy(ctx, req.GetBranch(), req.GetId(), stream))
}

// serveProxy streams the file of the binary proxy object id on branch.
func (b *binaries) serveProxy(ctx context.Context, branch, id string, out filestream.Sender) error {
	n, err := b.proxyName(ctx, branch, id)
	if err != nil {
		return err
	}
	return filestream.ServeFile(ctx, b.files, n, out)
}

// proxyName is the file name a binary proxy object holds.
func (b *binaries) proxyName(ctx context.Context, branch, id string) (files.Name, error) {
	// The lookup is a read of the index like any other: through the
	// read pool (the file is streamed after, off the pool).
	var bp delivery.BinaryProxy
	var err error
	b.api.reads.Run(ctx, func(ctx context.Context) { bp, err = b.api.dom.BinaryProxy(ctx, branch, id) })
	if err != nil {
		return files.Name{}, err
	}
	return files.ProxyName(bp.Hash, bp.Ext)
}

// GetBpoThumbnail implements Delivery_GetBpoThumbnail
// (GET /branches/{branch}/thumbnails/{id}?size=): the thumbnail of a
// binary proxy object's image, generated once and then served like a file.
func (b *binaries) GetBpoThumbnail(req *deliveryv1.GetBpoThumbnailRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil || b.api.dom == nil {
		return b.UnimplementedDeliveryBinaryServiceServer.GetBpoThumbnail(req, stream)
	}
	ctx := stream.Context()
	requested, given := req.Size, "size"
	if requested == nil {
		requested, given = req.Width, "width"
	}
	if requested != nil && *requested <= 0 {
		return status.Errorf(codes.InvalidArgument, "%s=%d: a thumbnail size is 1 or more (leave it out for the default)", given, *requested)
	}
	var px int64 // 0: the default
	if requested != nil {
		px = int64(*requested)
	}
	size, err := b.files.ThumbnailSize(px)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	n, err := b.proxyName(ctx, req.GetBranch(), req.GetId())
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	f, err := b.files.Thumbnail(ctx, n, size)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	return b.api.toStatus(ctx, filestream.Serve(ctx, b.files, f, stream))
}

// GetBinary implements Delivery_GetBinary (GET /binaries/{id}). There are
// no separate database binaries: id is the object id of a binary proxy
// object on the default branch, whose file it streams like
// GET /branches/{default}/files/{id}; the RPC declares a read grant on
// the default branch.
func (b *binaries) GetBinary(req *deliveryv1.GetBinaryRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil || b.api.dom == nil {
		return b.UnimplementedDeliveryBinaryServiceServer.GetBinary(req, stream)
	}
	ctx := stream.Context()
	notFound := fmt.Errorf("%w: binary %d", files.ErrNotFound, req.GetId())
	if req.GetId() <= 0 {
		return b.api.toStatus(ctx, notFound)
	}
	branch := strconv.FormatInt(content.BranchDefault, 10)
	return b.api.toStatus(ctx, b.serveProxy(ctx, branch, strconv.FormatInt(int64(req.GetId()), 10), stream))
}
