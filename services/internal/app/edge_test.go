package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// startLogged runs cfg until the test ends and returns the server and its
// log.
func startLogged(t *testing.T, cfg Config) (*Server, *testenv.Buffer) {
	t.Helper()
	srv, logs, _ := startLoggedStop(t, cfg)
	return srv, logs
}

// startLoggedStop is startLogged with a stop function, for tests that
// restart a server; it is called at the end of the test if not before.
func startLoggedStop(t *testing.T, cfg Config) (*Server, *testenv.Buffer, func()) {
	t.Helper()
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Complete(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatalf("%s: %v", cfg.Target, err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: Run: %v", cfg.Target, err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("%s did not shut down within 20s", cfg.Target)
			}
			if t.Failed() {
				t.Logf("log of %s:\n%s", cfg.Target, logs.String())
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("%s: Run ended early: %v", cfg.Target, err)
	}
	return srv, logs, stop
}

// edgeServer runs `cms run` on random ports with mod applied to its
// configuration.
func edgeServer(t *testing.T, mod func(*Config)) (string, *testenv.Buffer) {
	t.Helper()
	srv, logs := edgeServerGRPC(t, mod)
	return "http://" + srv.HTTPAddr(), logs
}

func edgeServerGRPC(t *testing.T, mod func(*Config)) (*Server, *testenv.Buffer) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	if mod != nil {
		mod(&cfg)
	}
	return startLogged(t, cfg)
}

// TestLoginThrottlingOverGRPC: gRPC clients calling directly meet the same
// guard: ResourceExhausted with a retry-after header.
func TestLoginThrottlingOverGRPC(t *testing.T) {
	srv, _ := edgeServerGRPC(t, func(c *Config) { c.Edge.LoginUserFailures, c.Edge.LoginBackoff = 2, time.Minute })
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(password string) (codes.Code, metadata.MD) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization",
			"Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+password)))
		var hdr metadata.MD
		err := conn.Invoke(ctx, "/cms.management.v1.ManagementService/GetBranches", &emptypb.Empty{}, &emptypb.Empty{}, grpc.Header(&hdr))
		return status.Code(err), hdr
	}
	for range 2 {
		if code, _ := call("wrong"); code != codes.Unauthenticated {
			t.Fatalf("wrong password: %v", code)
		}
	}
	code, hdr := call("test-password")
	if code != codes.ResourceExhausted || len(hdr.Get("retry-after")) == 0 || hdr.Get("retry-after")[0] != "60" {
		t.Fatalf("3rd attempt with the right password: %v %v", code, hdr)
	}
}

type edgeCall struct {
	method, path string
	body         io.Reader
	header       []string // name, value pairs
	user, pass   string   // no Authorization when user is ""
}

func (c edgeCall) do(t *testing.T, base string) (*http.Response, gateway.Problem, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, c.body)
	if err != nil {
		t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var p gateway.Problem
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s %s: ProblemDetails: %v: %s", c.method, c.path, err, b)
		}
	}
	return resp, p, b
}

// TestAuthenticationBeforeRouting: under the four base paths every request
// without valid credentials is 401 with a Basic challenge, whatever the
// path or method; the public endpoints stay public.
func TestAuthenticationBeforeRouting(t *testing.T) {
	base, _ := edgeServer(t, func(c *Config) {
		c.Edge.LoginUserFailures, c.Edge.LoginAddrFailures = 1000, 1000 // this test is not about throttling
	})
	routes := [][2]string{
		{"GET", "/apis/cms/v1/branches"}, {"POST", "/apis/cms/v1/branches/4/objects"},
		{"GET", "/apis/cms/v1/no/such/path"}, {"DELETE", "/apis/cms/v1/branches"}, // unknown path, wrong method
		{"PUT", "/apis/cms/v1/openapi.json"}, {"GET", "/apis/cms/v1"},
		{"GET", "/delivery/api/branches"}, {"GET", "/delivery/api/nothing"}, {"PATCH", "/delivery/api/branches"},
		{"GET", "/apis/rendering/v1/nothing"}, {"POST", "/apis/rendering/v1/openapi.json"},
		{"GET", "/apis/index/v1/nothing"}, {"OPTIONS", "/apis/index/v1/branches"},
		{"POST", "/apis/cms/v1/fileUpload"},
	}
	creds := []struct{ name, user, pass string }{
		{"no credentials", "", ""}, {"wrong password", "admin", "wrong"}, {"unknown user", "nobody", "test-password"},
	}
	for _, rt := range routes {
		for _, cr := range creds {
			body := strings.NewReader(`{"comment":"x"}`)
			resp, p, raw := edgeCall{method: rt[0], path: rt[1], body: body, user: cr.user, pass: cr.pass}.do(t, base)
			if resp.StatusCode != 401 || p.Status != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic realm=") {
				t.Errorf("%s %s, %s: %d %q %s", rt[0], rt[1], cr.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), raw)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/apis/cms/v1/openapi.json",
		"/delivery/api/openapi.json", "/apis/rendering/v1/openapi.json", "/apis/index/v1/openapi.json"} {
		if resp, _, raw := (edgeCall{method: "GET", path: path}).do(t, base); resp.StatusCode != 200 {
			t.Errorf("public GET %s: %d %.200s", path, resp.StatusCode, raw)
		}
	}
	// With credentials the router answers as before.
	for path, want := range map[string]int{"/apis/cms/v1/no/such/path": 404, "/apis/cms/v1/branches/4": 200} {
		if resp, _, raw := (edgeCall{method: "GET", path: path, user: "admin", pass: "test-password"}).do(t, base); resp.StatusCode != want {
			t.Errorf("authenticated GET %s: %d, want %d: %s", path, resp.StatusCode, want, raw)
		}
	}
}

// TestLoginThrottlingOverHTTP: after the configured wrong passwords the
// user is 429 with Retry-After, even with the right password, while a
// caller whose credentials are cached goes on.
func TestLoginThrottlingOverHTTP(t *testing.T) {
	base, _ := edgeServer(t, func(c *Config) {
		c.Edge.LoginUserFailures, c.Edge.LoginBackoff = 3, time.Minute
	})
	ok := edgeCall{method: "GET", path: "/apis/cms/v1/branches/4", user: "admin", pass: "test-password"}
	if resp, _, raw := ok.do(t, base); resp.StatusCode != 200 {
		t.Fatalf("first login: %d %s", resp.StatusCode, raw) // now cached
	}
	// A second user that has not logged in yet.
	httpClient{t, base, "admin", "test-password"}.create(obj(110, "", v(1100, 0, "ops"), v(1101, 0, "ops-password")))
	for i := range 3 {
		if resp, _, _ := (edgeCall{method: "GET", path: "/apis/cms/v1/branches/4", user: "ops", pass: "wrong"}).do(t, base); resp.StatusCode != 401 {
			t.Fatalf("wrong password %d: %d", i+1, resp.StatusCode)
		}
	}
	resp, p, raw := edgeCall{method: "GET", path: "/apis/cms/v1/branches/4", user: "ops", pass: "ops-password"}.do(t, base)
	if resp.StatusCode != 429 || p.Status != 429 || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("4th attempt with the right password: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	loadServedDoc(t, "Management").check(t, http.MethodGet, "/apis/cms/v1/branches/4", "",
		httpResult{code: resp.StatusCode, header: resp.Header, body: raw})
	if resp, _, raw := ok.do(t, base); resp.StatusCode != 200 {
		t.Fatalf("cached administrator during the lock: %d %s", resp.StatusCode, raw)
	}
}

// countingReader is an endless body that counts what the server consumed.
type countingReader struct{ n atomic.Int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n.Add(int64(len(p)))
	return len(p), nil
}

// TestBodiesAreLimitedAfterAuthentication: an anonymous huge POST is
// refused before its body is read; an authenticated one is 413 (not 429)
// whether it declares its length or not; a multipart upload may exceed the
// JSON limit up to its own.
func TestBodiesAreLimitedAfterAuthentication(t *testing.T) {
	base, _ := edgeServer(t, func(c *Config) { c.Edge.MaxBodyBytes, c.MaxUploadBytes = 64<<10, 128<<10 })
	send := func(user string, length int64) (int, gateway.Problem, int64) {
		body := &countingReader{}
		req, _ := http.NewRequest("POST", base+"/apis/cms/v1/branches/4/objects", io.LimitReader(body, 256<<20))
		req.ContentLength = length // -1: chunked
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, "test-password")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p gateway.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, p, body.n.Load()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, c := range []struct {
		name   string
		user   string
		length int64
		want   int
	}{
		{"anonymous 256 MiB", "", 256 << 20, 401},
		{"anonymous chunked", "", -1, 401},
		{"authenticated 256 MiB", "admin", 256 << 20, 413},
		{"authenticated chunked", "admin", -1, 413},
	} {
		code, p, consumed := send(c.user, c.length)
		if code != c.want || p.Status != c.want {
			t.Errorf("%s: %d %+v, want %d", c.name, code, p, c.want)
		}
		// The client's transport buffers some of the body before the
		// answer stops it; the server reads at most the limit.
		if consumed > 8<<20 {
			t.Errorf("%s: %d bytes of the body were sent", c.name, consumed)
		}
		t.Logf("%s: %d, %d bytes sent before the answer", c.name, code, consumed)
	}
	// Four 256 MiB bodies used to cost gigabytes; now the process
	// allocates a few buffers.
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated while refusing four 256 MiB bodies: %d KiB", allocated>>10)
	if allocated > 64<<20 {
		t.Errorf("refusing four 256 MiB bodies allocated %d MiB", allocated>>20)
	}
	// 5,000-deep arrays in a value are a 400 naming the nesting, not a 500.
	deep := `{"objects":[{"meta":{"typeRef":0},"values":[{"attribute":1000,"language":0,"variant":0,"value":` +
		strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}]}]}`
	resp, p, raw := edgeCall{method: "POST", path: "/apis/cms/v1/branches/4/objects", body: strings.NewReader(deep),
		user: "admin", pass: "test-password", header: []string{"Content-Type", "application/json"}}.do(t, base)
	if resp.StatusCode != 400 || !strings.Contains(p.Detail, "too deeply") {
		t.Errorf("deep JSON: %d %s", resp.StatusCode, raw)
	}
	// An upload may exceed the JSON limit up to its own: it reaches the
	// service (which stores the chunk), beyond it 413.
	for size, want := range map[int]int{100 << 10: 200, 256 << 10: 413} {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("Extension", ".txt")
		fw, _ := mw.CreateFormFile("File", "big.txt")
		_, _ = fw.Write(bytes.Repeat([]byte("x"), size))
		_ = mw.Close()
		resp, _, raw := edgeCall{method: "POST", path: "/apis/cms/v1/fileUpload", body: &buf, user: "admin", pass: "test-password",
			header: []string{"Content-Type", mw.FormDataContentType()}}.do(t, base)
		if resp.StatusCode != want || (want == 200 && !strings.Contains(string(raw), fmt.Sprintf(`"size":%d`, size))) {
			t.Errorf("%d KiB upload (JSON limit 64 KiB, upload limit 128 KiB): %d %s, want %d", size>>10, resp.StatusCode, raw, want)
		}
	}
}

// TestInvalidInputIs400 covers invalid UTF-8 in the path, the query and
// headers, and a non-ASCII X-CmsApi-Username that used to be dropped.
func TestInvalidInputIs400(t *testing.T) {
	base, _ := edgeServer(t, nil)
	for _, c := range []struct {
		name, path string
		header     []string
		want       string
	}{
		{"path", "/apis/cms/v1/branches/%FF", nil, "path"},
		{"query", "/delivery/api/branches/4/types/x/objects?lang=%FF", nil, `"lang"`},
		{"malformed query", "/apis/cms/v1/branches?x=%zz", nil, "query"},
		{"acting user", "/apis/cms/v1/branches/4", []string{"X-CmsApi-Username", "\xff"}, "X-Cmsapi-Username"},
		{"other header", "/apis/cms/v1/branches/4", []string{"X-Note", "caf\xe9"}, "X-Note"},
	} {
		resp, p, raw := edgeCall{method: "GET", path: c.path, header: c.header, user: "admin", pass: "test-password"}.do(t, base)
		if resp.StatusCode != 400 || p.Status != 400 || !strings.Contains(p.Detail, c.want) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.name, resp.StatusCode, raw, c.want)
		}
	}
	// Valid UTF-8 stays accepted.
	resp, _, raw := edgeCall{method: "GET", path: "/apis/cms/v1/branches/4?lang=d%C3%A9", user: "admin", pass: "test-password",
		header: []string{"X-Note", "café"}}.do(t, base)
	if resp.StatusCode != 200 {
		t.Errorf("valid UTF-8: %d %s", resp.StatusCode, raw)
	}
}

// TestRequestIDs: the request id is the trace id: the caller's
// traceparent's when it sends one (honoured with export off), else a new
// one; a sane client X-Request-Id is kept as client_request_id in the log.
// The answer, its ProblemDetails and the access log line carry the id.
func TestRequestIDs(t *testing.T) {
	base, logs := edgeServer(t, func(c *Config) { c.AccessLog = true })
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, p, _ := edgeCall{method: "GET", path: "/apis/cms/v1/branches/999999", user: "admin", pass: "test-password",
		header: []string{"X-Request-Id", "trace-42", "Traceparent", "00-" + traceID + "-00f067aa0ba902b7-01"}}.do(t, base)
	if resp.StatusCode != 404 || resp.Header.Get("X-Request-Id") != traceID || p.RequestID != traceID {
		t.Fatalf("caller's trace: %d %q %+v", resp.StatusCode, resp.Header.Get("X-Request-Id"), p)
	}
	if !strings.Contains(logs.String(), "request_id="+traceID) || !strings.Contains(logs.String(), "client_request_id=trace-42") {
		t.Errorf("the access log line lacks the request id or the client's:\n%s", logs.String())
	}
	resp, p, _ = edgeCall{method: "GET", path: "/apis/cms/v1/nothing", header: []string{"X-Request-Id", "bad id\t!"}}.do(t, base)
	id := resp.Header.Get("X-Request-Id")
	if len(id) != 32 || p.RequestID != id || strings.Contains(logs.String(), "client_request_id=bad") {
		t.Fatalf("new id: %q, problem %+v", id, p)
	}
}

// TestDefaultCORSIsClosed: without configuration no origin gets CORS
// headers.
func TestDefaultCORSIsClosed(t *testing.T) {
	base, _ := edgeServer(t, nil)
	resp, _, _ := edgeCall{method: "GET", path: "/apis/cms/v1/branches/4", user: "admin", pass: "test-password",
		header: []string{"Origin", "https://evil.example"}}.do(t, base)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("default CORS answers %v", resp.Header)
	}
}

// TestStalledBodyIsCut: a request whose body never completes loses its
// connection at the read timeout instead of holding it forever.
func TestStalledBodyIsCut(t *testing.T) {
	base, _ := edgeServer(t, func(c *Config) { c.Edge.ReadTimeout = 500 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /apis/cms/v1/branches/4/objects HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWRtaW46dGVzdC1wYXNzd29yZA==\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"objects\":")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_, err = conn.Read(make([]byte, 1)) // the server closes the connection
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %s", time.Since(start))
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("cut after %s, want about the 500ms read timeout", elapsed)
	}
}
