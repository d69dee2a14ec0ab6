package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// files streams a file in chunks, or fails before the first chunk.
type files struct {
	managementv1.UnimplementedManagementBinaryServiceServer
}

func (files) GetFile(req *managementv1.GetFileRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	switch req.GetName() {
	case "missing.png":
		return status.Error(codes.NotFound, "no file missing.png")
	case "part.png":
		_ = stream.SetHeader(metadata.Pairs("content-range", "bytes 0-3/10", "etag", `"f1"`))
		_ = SetHTTPStatus(stream.Context(), http.StatusPartialContent)
		return stream.Send(&httpbody.HttpBody{ContentType: "image/png", Data: []byte("\x89PNG")})
	}
	_ = stream.SetHeader(metadata.Pairs("etag", `"f1"`))
	for _, chunk := range []string{"\x89PNG\r\n", "\x1a\n", "rest"} {
		if err := stream.Send(&httpbody.HttpBody{ContentType: "image/png", Data: []byte(chunk)}); err != nil {
			return err
		}
	}
	return nil
}

func TestBinaryStreams(t *testing.T) {
	conn := backend(t, func(srv *grpc.Server) { managementv1.RegisterManagementBinaryServiceServer(srv, files{}) })
	mux := NewServeMux()
	if err := managementv1.RegisterManagementBinaryServiceHandlerClient(context.Background(), mux, managementv1.NewManagementBinaryServiceClient(conn)); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mux)
	defer hs.Close()
	get := func(name string) (*http.Response, string) {
		resp, err := http.Get(hs.URL + "/apis/cms/v1/files/" + name)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("whole.png")
	if resp.StatusCode != 200 || body != "\x89PNG\r\n\x1a\nrest" || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("ETag") != `"f1"` {
		t.Fatalf("whole file: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get("part.png")
	if resp.StatusCode != 206 || body != "\x89PNG" || resp.Header.Get("Content-Range") != "bytes 0-3/10" ||
		resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get("missing.png")
	if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") ||
		!strings.Contains(body, `"status":404`) || !strings.Contains(body, "no file missing.png") {
		t.Fatalf("missing: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}
