// Package filestream is the transport shared by the file operations of the
// Management, Delivery and Rendering groups: it answers a GET of a stored
// file on a google.api.HttpBody stream (ETag, If-None-Match → 304,
// Cache-Control, Range → 206/416) and reads an upload's file chunks from a
// client stream as an io.Reader. The rules themselves live in pkg/files.
package filestream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// sendBuffer is the size of the HttpBody messages of a download.
const sendBuffer = 256 << 10

// Sender is the server side of a streaming binary answer.
type Sender interface {
	Send(*httpbody.HttpBody) error
}

// Serve answers a GET of f: 304 when If-None-Match names its ETag, else
// the whole file or the ranges of the Range header, with the headers that
// keep an active file from running on the API's origin
// (files.ExposureHeaders). extra are more
// header pairs (e.g. a different cache-control). It returns domain errors
// (files.ErrRangeNotSatisfiable with its Content-Range header already set)
// for the caller's status mapping.
func Serve(ctx context.Context, svc *files.Service, f files.File, out Sender) error {
	pairs := append([]string{"cache-control", files.CacheControl, "accept-ranges", "bytes"}, files.ExposureHeaders(f.ContentType)...)
	if err := gateway.Conditional(ctx, f.ETag, pairs...); err != nil {
		return err
	}
	resp, err := svc.Read(f, header(ctx, "range"))
	if errors.Is(err, files.ErrRangeNotSatisfiable) {
		_ = grpc.SetHeader(ctx, metadata.Pairs("content-range", files.UnsatisfiedRange(f)))
	}
	if err != nil {
		return err
	}
	if resp.Status == http.StatusPartialContent {
		if resp.ContentRange != "" {
			_ = grpc.SetHeader(ctx, metadata.Pairs("content-range", resp.ContentRange))
		}
		_ = gateway.SetHTTPStatus(ctx, http.StatusPartialContent)
	}
	w := &bodyWriter{out: out, contentType: resp.ContentType}
	bw := bufio.NewWriterSize(w, sendBuffer)
	if err := svc.WriteTo(ctx, resp, bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if !w.sent { // an empty body still carries its content type
		return out.Send(&httpbody.HttpBody{ContentType: resp.ContentType})
	}
	return nil
}

// header is the first value of an incoming header (gRPC metadata).
func header(ctx context.Context, name string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// bodyWriter sends each write as one HttpBody message.
type bodyWriter struct {
	out         Sender
	contentType string
	sent        bool
}

func (w *bodyWriter) Write(p []byte) (int, error) {
	if err := w.out.Send(&httpbody.HttpBody{ContentType: w.contentType, Data: p}); err != nil {
		return 0, err
	}
	w.sent = true
	return len(p), nil
}

// ChunkReader reads the file chunks of a client-streaming upload. next
// returns the data of the next stream message (ok false when the message
// is not a chunk) or io.EOF at the end of the stream.
type ChunkReader struct {
	next func() (data []byte, ok bool, err error)
	buf  []byte
	err  error
}

// NewChunkReader returns the file part of an upload stream whose header
// has been read, or nil when the stream holds no file part (the form had
// no File field).
func NewChunkReader(next func() ([]byte, bool, error)) (*ChunkReader, error) {
	data, ok, err := next()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &ChunkReader{next: next}
	if ok {
		r.buf = data
	}
	return r, nil
}

// Read implements io.Reader.
func (r *ChunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		data, ok, err := r.next()
		if err != nil {
			r.err = err
			continue
		}
		if ok {
			r.buf = data
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ServeName answers a GET of the file named name ("{guid}{ext}").
func ServeName(ctx context.Context, svc *files.Service, name string, out Sender) error {
	n, err := files.ParseName(name)
	if err != nil {
		return err
	}
	return ServeFile(ctx, svc, n, out)
}

// ServeFile answers a GET of the file n.
func ServeFile(ctx context.Context, svc *files.Service, n files.Name, out Sender) error {
	f, err := svc.Stat(ctx, n)
	if err != nil {
		return err
	}
	return Serve(ctx, svc, f, out)
}
