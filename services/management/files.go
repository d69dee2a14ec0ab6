package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/files"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/filestream"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// StartUpload implements Files_StartUpload (POST /fileUpload).
func (s *service) StartUpload(stream grpc.ClientStreamingServer[managementv1.StartUploadRequest, managementv1.FileUploadResult]) error {
	if s.files == nil {
		return s.UnimplementedManagementServiceServer.StartUpload(stream)
	}
	_, c, err := readUpload(stream.Recv, func(h *managementv1.StartUploadHeader) (*string, bool) { return h.Extension, h.GetCommit() })
	if err != nil {
		return s.toStatus(stream.Context(), err)
	}
	res, err := s.files.StartUpload(stream.Context(), c)
	if err != nil {
		return s.toStatus(stream.Context(), err)
	}
	return stream.SendAndClose(uploadResult(res))
}

// ContinueUpload implements Files_ContinueUpload (PUT /fileUpload/{token}).
func (s *service) ContinueUpload(stream grpc.ClientStreamingServer[managementv1.ContinueUploadRequest, managementv1.FileUploadResult]) error {
	if s.files == nil {
		return s.UnimplementedManagementServiceServer.ContinueUpload(stream)
	}
	h, c, err := readUpload(stream.Recv, func(h *managementv1.ContinueUploadHeader) (*string, bool) { return h.Extension, h.GetCommit() })
	if err != nil {
		return s.toStatus(stream.Context(), err)
	}
	res, err := s.files.ContinueUpload(stream.Context(), h.GetToken(), c)
	if err != nil {
		return s.toStatus(stream.Context(), err)
	}
	return stream.SendAndClose(uploadResult(res))
}

// uploadMessage is a message of an upload stream: a header, then chunks.
type uploadMessage[H comparable] interface {
	GetHeader() H
	GetChunk() *managementv1.UploadChunk
}

// readUpload reads the header of an upload stream and returns it with the
// chunk whose Data streams the rest of the stream's file chunks (nil Data
// when the form had no file part).
func readUpload[M uploadMessage[H], H comparable](recv func() (M, error), fields func(H) (*string, bool)) (H, files.Chunk, error) {
	var zero H
	first, err := recv()
	if err != nil {
		return zero, files.Chunk{}, status.Error(codes.InvalidArgument, "the upload carries no form fields")
	}
	h := first.GetHeader()
	if h == zero {
		return zero, files.Chunk{}, status.Error(codes.InvalidArgument, "the upload must start with its form fields")
	}
	data, err := filestream.NewChunkReader(func() ([]byte, bool, error) {
		m, err := recv()
		if err != nil {
			return nil, false, err
		}
		return m.GetChunk().GetData(), m.GetChunk() != nil, nil
	})
	if err != nil {
		return zero, files.Chunk{}, err
	}
	ext, commit := fields(h)
	c := files.Chunk{Extension: ext, Commit: commit}
	if data != nil {
		c.Data = data
	}
	return h, c, nil
}

// DeleteTempFile implements Files_DeleteTempFile (DELETE /fileUpload/{token}).
func (s *service) DeleteTempFile(ctx context.Context, req *managementv1.DeleteTempFileRequest) (*emptypb.Empty, error) {
	if s.files == nil {
		return s.UnimplementedManagementServiceServer.DeleteTempFile(ctx, req)
	}
	if err := s.files.CancelUpload(ctx, req.GetToken()); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

func uploadResult(r files.UploadResult) *managementv1.FileUploadResult {
	out := &managementv1.FileUploadResult{Size: r.Size, Extension: r.Extension, Created: r.Created}
	if r.Token != "" {
		out.Token = proto.String(r.Token)
	}
	if r.GUID != "" {
		out.Guid = proto.String(r.GUID)
	}
	return out
}

// GetFile implements Files_GetFile (GET /files/{name}).
func (b *binaries) GetFile(req *managementv1.GetFileRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.files == nil {
		return b.UnimplementedManagementBinaryServiceServer.GetFile(req, stream)
	}
	ctx := stream.Context()
	return b.api.toStatus(ctx, filestream.ServeName(ctx, b.files, req.GetName(), stream))
}
