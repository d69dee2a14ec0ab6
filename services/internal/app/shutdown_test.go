package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestShutdownSequence: on SIGTERM (the Run context ends) the process
// first reports not-ready (/readyz 503, gRPC health NOT_SERVING) while it
// keeps serving for DrainDelay: a request in flight before the signal
// completes, and a write sent during the drain is accepted (and is what
// the in-flight read-your-writes request waits for, so the workers still
// run). Only then do the listeners close and Run return.
func TestShutdownSequence(t *testing.T) {
	testenv.CheckGoroutines(t) // once Run returned, nothing the server started runs on
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.DrainDelay = 1500 * time.Millisecond
	cfg.ShutdownTimeout = 10 * time.Second
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	logs := &testenv.Buffer{}
	srv, err := Complete(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	base := "http://" + srv.HTTPAddr()
	c := httpClient{t: t, base: base, user: "admin", pass: "test-password"}
	c.must(http.StatusOK, http.MethodGet, "/readyz", "")
	health := grpcHealth(t, srv.GRPCAddr())
	if st := healthStatus(t, health); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown = %v", st)
	}
	first := c.create(obj(0, "drainType", v(1000, 201, "Drain type")))

	// In flight: a read that waits for the next transaction.
	inflight := make(chan httpResult, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/delivery/api/branches/4/objects/drainobj", nil)
		req.SetBasicAuth("admin", "test-password")
		req.Header.Set("X-Cms-Min-Version", strconv.FormatInt(first.Transaction.ID+1, 10))
		req.Header.Set("X-Cms-Max-Wait", "8s")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			inflight <- httpResult{code: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		inflight <- httpResult{code: resp.StatusCode, body: b}
	}()
	// The request may reach the server just before or just after the
	// signal: during the drain both must be served.
	signalled := time.Now()
	sigterm()

	// Not ready at once, over a new connection: the listener is still open.
	pollUntil(t, 2*time.Second, "readyz 503", func() bool {
		return c.do(http.MethodGet, "/readyz", "").code == http.StatusServiceUnavailable
	})
	pollUntil(t, 2*time.Second, "health NOT_SERVING", func() bool {
		return healthStatus(t, health) == healthpb.HealthCheckResponse_NOT_SERVING
	})
	if c.do(http.MethodGet, "/healthz", "").code != http.StatusOK {
		t.Error("healthz (liveness) must stay 200 while draining")
	}
	// The 503 of /readyz while draining is the expected answer, no fault.
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("an ERROR was logged while draining:\n%s", logs)
	}
	// New requests are still served during the drain.
	c.create(obj(first.CreatedObjectIDs[0], "drainobj", v(1000, 201, "Drained")))
	select {
	case r := <-inflight:
		if r.code != http.StatusOK {
			t.Fatalf("in-flight request = %d: %s", r.code, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight request did not complete")
	}
	if d := time.Since(signalled); d >= cfg.DrainDelay {
		t.Fatalf("drain checks took %v, longer than the drain delay %v: the test proves nothing", d, cfg.DrainDelay)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(cfg.DrainDelay + cfg.ShutdownTimeout):
		t.Fatal("Run did not return")
	}
	if d := time.Since(signalled); d < cfg.DrainDelay {
		t.Errorf("Run returned %v after the signal, before the drain delay %v", d, cfg.DrainDelay)
	}
	if conn, err := net.DialTimeout("tcp", srv.HTTPAddr(), time.Second); err == nil {
		conn.Close()
		t.Error("HTTP listener still open after Run returned")
	}
}

func grpcHealth(t *testing.T, addr string) healthpb.HealthClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return healthpb.NewHealthClient(conn)
}

// healthStatus is the overall gRPC health; an unreachable server counts
// as NOT_SERVING.
func healthStatus(t *testing.T, h healthpb.HealthClient) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return healthpb.HealthCheckResponse_NOT_SERVING
	}
	return r.GetStatus()
}

// pollUntil polls cond every 10 ms until it holds or the deadline passes.
func pollUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
