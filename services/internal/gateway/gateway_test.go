package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// scripted answers GetBranch according to the branch id, so one table can
// drive every status and header the gateway maps.
type scripted struct {
	managementv1.UnimplementedManagementServiceServer
}

func (scripted) GetBranch(ctx context.Context, req *managementv1.GetBranchRequest) (*managementv1.CmsObject, error) {
	ok := &managementv1.CmsObject{Meta: &managementv1.CmsObjectMetadata{Id: 1, Guid: "g"}}
	header := func(kv ...string) { _ = grpc.SetHeader(ctx, metadata.Pairs(kv...)) }
	switch req.GetId() {
	case "ok":
		header("etag", `"v1"`, "cache-control", "no-cache", "x-internal", "secret")
		return ok, nil
	case "created":
		header("location", "/apis/cms/v1/branches/1")
		_ = SetHTTPStatus(ctx, http.StatusCreated)
		return ok, nil
	case "partial":
		header("content-range", "bytes 0-9/100")
		_ = SetHTTPStatus(ctx, http.StatusPartialContent)
		return ok, nil
	case "not-modified":
		header("etag", `"v1"`)
		return nil, WithReason(codes.FailedPrecondition, ReasonNotModified, "not modified", nil)
	case "echo":
		md, _ := metadata.FromIncomingContext(ctx)
		for _, k := range []string{"authorization", "if-none-match", "range", "x-cmsapi-username", "x-other"} {
			v := strings.Join(md.Get(k), ",")
			ok.Values = append(ok.Values, &managementv1.CmsValue{Value: structpb.NewStringValue(k + "=" + v)})
		}
		return ok, nil
	case "unauthenticated":
		header("www-authenticate", `Basic realm="cms"`)
		return nil, status.Error(codes.Unauthenticated, "credentials needed")
	case "forbidden":
		return nil, status.Error(codes.PermissionDenied, "no")
	case "not-found":
		return nil, status.Error(codes.NotFound, "branch 7 does not exist")
	case "invalid":
		return nil, status.Error(codes.InvalidArgument, "id must be a number")
	case "conflict":
		return nil, status.Error(codes.AlreadyExists, "guid taken")
	case "too-large":
		return nil, WithReason(codes.ResourceExhausted, ReasonPayloadTooLarge, "chunk too large", nil)
	case "unprocessable":
		return nil, WithReason(codes.InvalidArgument, ReasonUnprocessable, "total too large", nil)
	case "unavailable":
		return nil, status.Error(codes.Unavailable, "index not ready")
	case "internal":
		return nil, status.Error(codes.Internal, "pq: relation missing")
	}
	return nil, status.Error(codes.Unimplemented, "unknown script")
}

// backend serves the services register adds on a gRPC server on a free
// port for the test and returns a connection to it.
func backend(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

type harness struct {
	client managementv1.ManagementServiceClient
	http   *httptest.Server
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	conn := backend(t, func(srv *grpc.Server) { managementv1.RegisterManagementServiceServer(srv, scripted{}) })
	mux := NewServeMux()
	client := managementv1.NewManagementServiceClient(conn)
	if err := managementv1.RegisterManagementServiceHandlerClient(context.Background(), mux, client); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(CORS(CORSConfig{AllowedOrigins: []string{"https://app.example"}}, mux))
	t.Cleanup(hs.Close)
	return &harness{client: client, http: hs}
}

func (h *harness) get(t *testing.T, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.http.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestStatusAndHeaderMapping runs each scripted answer over gRPC and over
// HTTP and asserts the gRPC code and the HTTP status and headers.
func TestStatusAndHeaderMapping(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		id          string
		wantCode    codes.Code
		wantHTTP    int
		wantHeaders map[string]string
		wantProblem bool
	}{
		{"ok", codes.OK, 200, map[string]string{"ETag": `"v1"`, "Cache-Control": "no-cache", "X-Internal": "", "Grpc-Metadata-Etag": ""}, false},
		{"created", codes.OK, 201, map[string]string{"Location": "/apis/cms/v1/branches/1", "Grpc-Metadata-X-Http-Code": ""}, false},
		{"partial", codes.OK, 206, map[string]string{"Content-Range": "bytes 0-9/100"}, false},
		{"not-modified", codes.FailedPrecondition, 304, map[string]string{"ETag": `"v1"`}, false},
		{"unauthenticated", codes.Unauthenticated, 401, map[string]string{"WWW-Authenticate": `Basic realm="cms"`}, true},
		{"forbidden", codes.PermissionDenied, 403, nil, true},
		{"not-found", codes.NotFound, 404, nil, true},
		{"invalid", codes.InvalidArgument, 400, nil, true},
		{"conflict", codes.AlreadyExists, 409, nil, true},
		{"too-large", codes.ResourceExhausted, 413, nil, true},
		{"unprocessable", codes.InvalidArgument, 422, nil, true},
		{"unavailable", codes.Unavailable, 503, nil, true},
		{"internal", codes.Internal, 500, nil, true},
		{"unscripted", codes.Unimplemented, 501, nil, true},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			_, err := h.client.GetBranch(context.Background(), &managementv1.GetBranchRequest{Id: c.id})
			if got := status.Code(err); got != c.wantCode {
				t.Errorf("gRPC code = %v, want %v", got, c.wantCode)
			}
			resp, body := h.get(t, "/apis/cms/v1/branches/"+c.id, nil)
			if resp.StatusCode != c.wantHTTP {
				t.Errorf("HTTP status = %d, want %d (body %s)", resp.StatusCode, c.wantHTTP, body)
			}
			for k, want := range c.wantHeaders {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if c.wantHTTP == 304 && len(body) != 0 {
				t.Errorf("304 with a body: %q", body)
			}
			if c.wantProblem {
				assertProblem(t, resp, body, c.wantHTTP, "/apis/cms/v1/branches/"+c.id)
			}
		})
	}
}

func assertProblem(t *testing.T, resp *http.Response, body []byte, status int, instance string) Problem {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p Problem
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("not a ProblemDetails: %v: %s", err, body)
	}
	if p.Status != status || p.Title != http.StatusText(status) || p.Type == "" || p.Instance != instance {
		t.Errorf("problem = %+v, want status %d, title %q, instance %s", p, status, http.StatusText(status), instance)
	}
	if status == 500 && strings.Contains(p.Detail, "pq:") {
		t.Errorf("internal cause leaked to the client: %q", p.Detail)
	}
	if status != 500 && p.Detail == "" {
		t.Errorf("problem without a detail: %s", body)
	}
	return p
}

func TestIncomingHeadersReachTheService(t *testing.T) {
	h := newHarness(t)
	resp, body := h.get(t, "/apis/cms/v1/branches/echo", map[string]string{
		"Authorization": "Basic YTpi", "If-None-Match": `"v1"`, "Range": "bytes=0-9",
		"X-CmsApi-Username": "editor", "X-Other": "dropped",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, want := range []string{`"authorization=Basic YTpi"`, `"if-none-match=\"v1\""`, `"range=bytes=0-9"`,
		`"x-cmsapi-username=editor"`, `"x-other="`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("service did not see %s in %s", want, body)
		}
	}
}

func TestRoutingErrors(t *testing.T) {
	h := newHarness(t)
	resp, body := h.get(t, "/apis/cms/v1/no/such/route", nil)
	if resp.StatusCode != 404 {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
	assertProblem(t, resp, body, 404, "/apis/cms/v1/no/such/route")

	req, _ := http.NewRequest(http.MethodPut, h.http.URL+"/apis/cms/v1/branches/1", nil)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 405 {
		t.Fatalf("wrong method: %d %s", r2.StatusCode, b2)
	}
	assertProblem(t, r2, b2, 405, "/apis/cms/v1/branches/1")
}

func TestCORS(t *testing.T) {
	h := newHarness(t)
	req, _ := http.NewRequest(http.MethodOptions, h.http.URL+"/apis/cms/v1/branches/ok", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "x-cmsapi-username") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	r2, _ := h.get(t, "/apis/cms/v1/branches/ok", map[string]string{"Origin": "https://evil.example"})
	if r2.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS allowed an unlisted origin")
	}
	r3, _ := h.get(t, "/apis/cms/v1/branches/ok", map[string]string{"Origin": "https://app.example"})
	if r3.Header.Get("Access-Control-Expose-Headers") == "" || r3.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatal("CORS headers missing on an allowed origin")
	}
}
