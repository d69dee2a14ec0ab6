package delivery

import (
	"github.com/cmsplatform/cms/pkg/files"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/filestream"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
)

// binaries implements DeliveryBinaryService: files by name and the files
// and thumbnails of binary proxy objects. Database binaries
// (GET /binaries/{id}) are not built: they answer 501.
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
	bp, err := b.api.dom.BinaryProxy(ctx, req.GetBranch(), req.GetId())
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	n, err := files.ProxyName(bp.Hash, bp.Ext)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	return b.api.toStatus(ctx, filestream.ServeFile(ctx, b.files, n, stream))
}

// GetBpoThumbnail implements Delivery_GetBpoThumbnail
// (GET /branches/{branch}/thumbnails/{id}?size=): the thumbnail of a
// binary proxy object's image, generated once and then served like a file.
func (b *binaries) GetBpoThumbnail(req *deliveryv1.GetBpoThumbnailRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil || b.api.dom == nil {
		return b.UnimplementedDeliveryBinaryServiceServer.GetBpoThumbnail(req, stream)
	}
	ctx := stream.Context()
	requested := req.GetSize()
	if requested == 0 {
		requested = req.GetWidth()
	}
	size, err := b.files.ThumbnailSize(int64(requested))
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	bp, err := b.api.dom.BinaryProxy(ctx, req.GetBranch(), req.GetId())
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	n, err := files.ProxyName(bp.Hash, bp.Ext)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	f, err := b.files.Thumbnail(ctx, n, size)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	return b.api.toStatus(ctx, filestream.Serve(ctx, b.files, f, stream))
}
