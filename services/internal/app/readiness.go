package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// readyNeeds says which components a target cannot serve without, i.e.
// what its /readyz checks. It is narrower than needs: a Delivery replica
// still answers from its cache while the search engine is down (an
// uncached read then answers 503 + Retry-After), so only its cache counts
// (the memory cache is always reachable); Management writes to the store
// (its outbox buffers the change events while NATS is away); the Index
// group answers only from the search engine; the indexer moves events into
// the search engine. Rendering has no component-backed operation yet.
var readyNeeds = map[string][]string{
	TargetManagement: {"store"},
	TargetDelivery:   {"cache"},
	TargetRendering:  {},
	TargetIndex:      {"search"},
	TargetIndexer:    {"events", "search"},
}

// readyComponents are the components the configured targets need to be
// ready, in opening order.
func (c Config) readyComponents() []string {
	var out []string
	for _, n := range []string{"store", "events", "search", "cache", "blobs"} {
		for _, t := range c.Targets() {
			if slices.Contains(readyNeeds[t], n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// PingOnly checks the named open components (others are skipped); the
// error names the failing ones.
func (c *Components) PingOnly(ctx context.Context, names []string) error {
	var errs []error
	for _, p := range c.pings {
		if !slices.Contains(names, p.name) {
			continue
		}
		if err := p.ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// errDraining is the readiness answer of a process that is shutting down.
var errDraining = errors.New("shutting down")

// ready reports whether this process should get traffic: not draining and
// every component its targets need answers a ping within Timeouts.Ready.
func (s *Server) ready(ctx context.Context) error {
	if s.draining.Load() {
		return errDraining
	}
	if d := s.cfg.Timeouts.Ready; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return s.comps.PingOnly(ctx, s.cfg.readyComponents())
}

// readyz answers 200 when ready, else 503 with the reason. /healthz is
// liveness only: it answers 200 while the process runs.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.ready(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	_, _ = w.Write([]byte("ready"))
}

// startDraining is the first step of a shutdown: /readyz answers 503 and
// the gRPC health service NOT_SERVING, while both servers keep serving
// in-flight and new requests for DrainDelay, so load balancers notice and
// stop sending traffic before the listeners close.
func (s *Server) startDraining() {
	s.draining.Store(true)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if s.cfg.DrainDelay <= 0 {
		return
	}
	s.log.Info("draining: not ready, still serving", "delay", s.cfg.DrainDelay)
	t := time.NewTimer(s.cfg.DrainDelay)
	defer t.Stop()
	<-t.C
}
