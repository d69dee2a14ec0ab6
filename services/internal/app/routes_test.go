package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// startServer runs the whole system (`cms run`) on random ports in a temp dir.
func startServer(t *testing.T) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	srv, _ := startLogged(t, cfg)
	return srv
}

type route struct {
	op, method, path string
	multipart        bool
}

// apiRoutes lists the HTTP route of every RPC that carries an operation id.
func apiRoutes(t *testing.T) []route {
	var routes []route
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "cms.") {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			ms := fd.Services().Get(i).Methods()
			for j := 0; j < ms.Len(); j++ {
				opts := ms.Get(j).Options().(*descriptorpb.MethodOptions)
				op := proto.GetExtension(opts, optionsv1.E_OperationId).(string)
				if op == "" {
					t.Errorf("%s has no operation_id", ms.Get(j).FullName())
					continue
				}
				if mp := proto.GetExtension(opts, optionsv1.E_Multipart).(*optionsv1.MultipartRoute); mp != nil {
					routes = append(routes, route{op, mp.GetMethod(), mp.GetPath(), true})
					continue
				}
				rule := proto.GetExtension(opts, annotations.E_Http).(*annotations.HttpRule)
				method, path := httpRule(rule)
				if method == "" {
					t.Errorf("%s (%s) has no HTTP route", ms.Get(j).FullName(), op)
					continue
				}
				routes = append(routes, route{op, method, path, false})
			}
		}
		return true
	})
	return routes
}

func httpRule(r *annotations.HttpRule) (string, string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		return http.MethodPost, p.Post
	case *annotations.HttpRule_Put:
		return http.MethodPut, p.Put
	case *annotations.HttpRule_Patch:
		return http.MethodPatch, p.Patch
	case *annotations.HttpRule_Delete:
		return http.MethodDelete, p.Delete
	}
	return "", ""
}

var pathVar = regexp.MustCompile(`\{([a-z_]+)(=\*\*)?\}`)

// concrete fills a path template with sample values.
func concrete(path string) string {
	return pathVar.ReplaceAllStringFunc(path, func(v string) string {
		switch {
		case strings.Contains(v, "=**"):
			return "reports/2024/summary.txt"
		case v == "{file}":
			return "2100001.css"
		case v == "{name}":
			return "picture.png"
		}
		return "1"
	})
}

func request(t *testing.T, base string, rt route, withAuth bool) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	contentType := ""
	switch {
	case rt.multipart:
		body, contentType = sampleUpload()
	case rt.method != http.MethodGet:
		body, contentType = strings.NewReader("{}"), "application/json"
	}
	req, err := http.NewRequest(rt.method, base+concrete(rt.path), body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if withAuth {
		req.SetBasicAuth("admin", "test-password")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := readAnswer(resp)
	return resp, b
}

// readAnswer reads a whole answer, or of an event stream that started
// (Delivery_WatchChanges: 200 text/event-stream, which does not end) only
// what arrived with its first flush.
func readAnswer(resp *http.Response) ([]byte, error) {
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		buf := make([]byte, 4096)
		n, err := resp.Body.Read(buf)
		if err == io.EOF {
			err = nil
		}
		return buf[:n], err
	}
	return io.ReadAll(resp.Body)
}

// TestEveryOperationIsRouted calls all operationCount operations over HTTP: none may be
// a route-level 404, and an operation not built yet must be a 501
// ProblemDetails naming it.
func TestEveryOperationIsRouted(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	routes := apiRoutes(t)
	if len(routes) != operationCount {
		t.Fatalf("%d operations declared, want %d", len(routes), operationCount)
	}
	seen := map[string]bool{}
	for _, rt := range routes {
		if seen[rt.op] {
			t.Errorf("operation %s declared twice", rt.op)
		}
		seen[rt.op] = true
		t.Run(rt.op, func(t *testing.T) {
			resp, body := request(t, base, rt, true)
			var p gateway.Problem
			_ = json.Unmarshal(body, &p)
			if p.Type == gateway.ProblemTypeNoRoute || resp.StatusCode == http.StatusMethodNotAllowed {
				t.Fatalf("%s %s is not routed: %d %s", rt.method, concrete(rt.path), resp.StatusCode, body)
			}
			if resp.StatusCode == http.StatusNotImplemented {
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") ||
					p.Operation != rt.op || !strings.Contains(p.Detail, rt.op) {
					t.Fatalf("501 does not name %s: %s %s", rt.op, resp.Header.Get("Content-Type"), body)
				}
			}
			// Without credentials every operation is refused with 401.
			resp, body = request(t, base, rt, false)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("without credentials: %d %v %s", resp.StatusCode, resp.Header, body)
			}
		})
	}
}

func TestUnknownPathIs404Problem(t *testing.T) {
	srv := startServer(t)
	for _, path := range []string{"/apis/cms/v1/nothing", "/delivery/api/x/y/z", "/nope"} {
		resp, body := request(t, "http://"+srv.HTTPAddr(), route{method: http.MethodGet, path: path}, true)
		var p gateway.Problem
		if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != 404 || p.Type != gateway.ProblemTypeNoRoute {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

func TestOperationalEndpoints(t *testing.T) {
	srv := startServer(t)
	base := "http://" + srv.HTTPAddr()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for path, want := range map[string]string{
		"/healthz": "ok", "/readyz": "ready", "/metrics": "cms_grpc_calls_total",
		"/apis/cms/v1/openapi.json": `"swagger"`, "/delivery/api/openapi.json": `"swagger"`,
		"/apis/rendering/v1/openapi.json": `"swagger"`, "/apis/index/v1/openapi.json": `"swagger"`,
	} {
		if path == "/metrics" {
			// an authenticated call first (anonymous ones stop at the
			// HTTP edge), so the per-call metric has a sample
			_, _ = request(t, base, route{method: http.MethodGet, path: "/apis/cms/v1/branches"}, true)
		}
		code, body := get(path)
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d, want 200 containing %q; got %.200s", path, code, want, body)
		}
	}

	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || hc.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("grpc health: %v %v", hc, err)
	}
	// A domain error over gRPC: RenderBatch without jobs is InvalidArgument
	// with the domain's message.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic YWRtaW46dGVzdC1wYXNzd29yZA==")
	err = conn.Invoke(ctx, "/cms.rendering.v1.RenderingService/RenderBatch", &emptypb.Empty{}, &emptypb.Empty{})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "at least one job") {
		t.Fatalf("gRPC RenderBatch without jobs: %v", err)
	}
	err = conn.Invoke(context.Background(), "/cms.management.v1.ManagementService/GetBranches", &emptypb.Empty{}, &emptypb.Empty{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("gRPC without credentials: %v", err)
	}
}
