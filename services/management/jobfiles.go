package management

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"

	"github.com/cmsplatform/cms/pkg/jobs"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The byte streams of jobs: logs, artifacts, the artifact ZIP (binaries)
// and job input uploads (multipart, service).

// chunkSize is the size of one streamed HttpBody message.
const chunkSize = 64 << 10

// binaryType is the content type of logs, artifacts and the ZIP: NovaDB's
// document declares application/octet-stream for all three.
const binaryType = "application/octet-stream"

// GetJobLogs implements Job_GetJobLogs: what the job logged so far (UTF-8
// text lines).
func (b *binaries) GetJobLogs(req *managementv1.GetJobLogsRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.api.jobs == nil {
		return b.UnimplementedManagementBinaryServiceServer.GetJobLogs(req, stream)
	}
	ctx := stream.Context()
	j, err := b.api.job(ctx, req.GetJobId())
	if err != nil {
		return err
	}
	rc, err := b.api.jobs.OpenLog(ctx, j)
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	defer rc.Close()
	return sendStream(stream, binaryType, rc)
}

// GetJobArtifact implements Job_GetJobArtifact: one artifact, with a
// single-range Range header answered 206 (416 past the end); a path that
// leaves the job's artifacts (.., absolute, backslash) is 400.
func (b *binaries) GetJobArtifact(req *managementv1.GetJobArtifactRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.api.jobs == nil {
		return b.UnimplementedManagementBinaryServiceServer.GetJobArtifact(req, stream)
	}
	ctx := stream.Context()
	if _, err := jobs.CleanArtifactPath(req.GetPath()); err != nil {
		return b.api.toStatus(ctx, err)
	}
	j, err := b.api.job(ctx, req.GetJobId())
	if err != nil {
		return err
	}
	var rng *jobs.Range
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("range")) > 0 {
		if rng, err = jobs.ParseRange(md.Get("range")[0]); err != nil {
			return b.api.toStatus(ctx, err)
		}
	}
	a, err := b.api.jobs.OpenArtifact(ctx, j, req.GetPath(), rng)
	if errors.Is(err, jobs.ErrRangeNotSatisfiable) {
		return rangeNotSatisfiable(stream, a.Size, err)
	}
	if err != nil {
		return b.api.toStatus(ctx, err)
	}
	defer a.Close()
	hdr := metadata.Pairs("accept-ranges", "bytes",
		"content-disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(a.Path)}))
	if rng != nil {
		hdr.Append("content-range", fmt.Sprintf("bytes %d-%d/%d", a.Offset, a.Offset+a.Length-1, a.Size))
		if err := gateway.SetHTTPStatus(ctx, 206); err != nil {
			return err
		}
	}
	if err := grpc.SetHeader(ctx, hdr); err != nil {
		return err
	}
	return sendStream(stream, binaryType, a)
}

// GetJobArtifactsZip implements Job_GetJobArtifactsZip: every artifact in
// one ZIP, streamed while it is written.
func (b *binaries) GetJobArtifactsZip(req *managementv1.GetJobArtifactsZipRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	if b.api.jobs == nil {
		return b.UnimplementedManagementBinaryServiceServer.GetJobArtifactsZip(req, stream)
	}
	ctx := stream.Context()
	j, err := b.api.job(ctx, req.GetJobId())
	if err != nil {
		return err
	}
	name := mime.FormatMediaType("attachment", map[string]string{"filename": "job-" + strconv.Itoa(int(j.ID)) + "-artifacts.zip"})
	if err := grpc.SetHeader(ctx, metadata.Pairs("content-disposition", name)); err != nil {
		return err
	}
	w := &bodyWriter{stream: stream, contentType: binaryType}
	if err := b.api.jobs.WriteZip(ctx, j, w); err != nil {
		return b.api.toStatus(ctx, err)
	}
	return w.flush()
}

// sendStream sends r as HttpBody messages of chunkSize bytes; an empty r
// still sends one (empty) message so the content type is set.
func sendStream(stream grpc.ServerStreamingServer[httpbody.HttpBody], contentType string, r io.Reader) error {
	w := &bodyWriter{stream: stream, contentType: contentType}
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	return w.flush()
}

// bodyWriter buffers up to chunkSize bytes per HttpBody message.
type bodyWriter struct {
	stream      grpc.ServerStreamingServer[httpbody.HttpBody]
	contentType string
	buf         []byte
	sent        bool
}

func (w *bodyWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == chunkSize {
			if err := w.send(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *bodyWriter) send() error {
	err := w.stream.Send(&httpbody.HttpBody{ContentType: w.contentType, Data: w.buf})
	w.buf, w.sent = make([]byte, 0, chunkSize), true
	return err
}

func (w *bodyWriter) flush() error {
	if len(w.buf) > 0 || !w.sent {
		return w.send()
	}
	return nil
}

// JobInputUpload implements Job_JobInputUpload: the first chunk (form
// part "file") of a new job input; answers its token and size.
func (s *service) JobInputUpload(stream grpc.ClientStreamingServer[managementv1.JobInputUploadRequest, managementv1.JobInputUploadResult]) error {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.JobInputUpload(stream)
	}
	ctx := stream.Context()
	r, err := uploadChunks(func() (*managementv1.UploadChunk, bool, error) {
		m, err := stream.Recv()
		return m.GetChunk(), m.GetHeader() != nil, err
	})
	if err != nil {
		return s.toStatus(ctx, err)
	}
	token, size, err := s.jobs.StartInput(ctx, r)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	return stream.SendAndClose(&managementv1.JobInputUploadResult{Size: size, Token: &token})
}

// JobInputContinue implements Job_JobInputContinue: appends a chunk.
func (s *service) JobInputContinue(stream grpc.ClientStreamingServer[managementv1.JobInputContinueRequest, managementv1.JobInputUploadResult]) error {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.JobInputContinue(stream)
	}
	ctx := stream.Context()
	var token string
	r, err := uploadChunks(func() (*managementv1.UploadChunk, bool, error) {
		m, err := stream.Recv()
		if h := m.GetHeader(); h != nil {
			token = h.GetToken()
			return nil, true, err
		}
		return m.GetChunk(), false, err
	})
	if err != nil {
		return s.toStatus(ctx, err)
	}
	size, err := s.jobs.ContinueInput(ctx, token, r)
	if err != nil {
		return s.toStatus(ctx, err)
	}
	return stream.SendAndClose(&managementv1.JobInputUploadResult{Size: size, Token: &token})
}

// JobInputCancel implements Job_JobInputCancel (200, empty body).
func (s *service) JobInputCancel(ctx context.Context, req *managementv1.JobInputCancelRequest) (*emptypb.Empty, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.JobInputCancel(ctx, req)
	}
	if err := s.jobs.CancelInput(ctx, req.GetToken()); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

// uploadChunks reads the upload's header message and its first chunk (a
// form without a file is ErrInvalid) and returns a reader over the file's
// bytes, received as they are read.
func uploadChunks(recv func() (*managementv1.UploadChunk, bool, error)) (io.Reader, error) {
	var first *managementv1.UploadChunk
	for first == nil {
		c, header, err := recv()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the form has no file part \"file\"", jobs.ErrInvalid)
		}
		if err != nil {
			return nil, err
		}
		if !header && c == nil {
			return nil, fmt.Errorf("%w: malformed upload stream", jobs.ErrInvalid)
		}
		first = c
	}
	return &chunkReader{pending: first.GetData(), recv: recv}, nil
}

type chunkReader struct {
	pending []byte
	recv    func() (*managementv1.UploadChunk, bool, error)
	err     error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		ch, _, err := c.recv()
		if err != nil {
			c.err = err
			continue
		}
		c.pending = ch.GetData()
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// rangeNotSatisfiable answers 416 with Content-Range and a ProblemDetails
// body. It is sent as the stream's answer, not as an error: grpc-gateway
// sets the status of a failed stream from the gRPC code alone, which has
// no 416.
func rangeNotSatisfiable(stream grpc.ServerStreamingServer[httpbody.HttpBody], size int64, err error) error {
	ctx := stream.Context()
	if err := grpc.SetHeader(ctx, metadata.Pairs("content-range", fmt.Sprintf("bytes */%d", size))); err != nil {
		return err
	}
	if err := gateway.SetHTTPStatus(ctx, http.StatusRequestedRangeNotSatisfiable); err != nil {
		return err
	}
	body, _ := json.Marshal(gateway.Problem{Type: "https://cmsplatform.dev/problems/range-not-satisfiable",
		Title: http.StatusText(http.StatusRequestedRangeNotSatisfiable), Status: http.StatusRequestedRangeNotSatisfiable,
		Detail: err.Error(), Reason: gateway.ReasonRangeNotSatisfiable})
	return stream.Send(&httpbody.HttpBody{ContentType: gateway.ContentTypeProblem, Data: body})
}
