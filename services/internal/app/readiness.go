package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/cmsplatform/cms/services/indexer"
	"github.com/cmsplatform/cms/services/internal/gateway"
)

// readyGroups are the readiness groups of the configured targets
// (targetTable).
func (c Config) readyGroups() [][]string {
	var out [][]string
	for _, t := range c.Targets() {
		for _, g := range target(t).ready {
			if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, g) }) {
				out = append(out, g)
			}
		}
	}
	return out
}

// PingAny checks the named open components in parallel and reports nil
// as soon as one answers (or when none of them is open); otherwise the
// error names every failure.
func (c *Components) PingAny(ctx context.Context, names []string) error {
	answers, n := c.pingParallel(ctx, func(name string) bool { return slices.Contains(names, name) })
	var all []error
	for range n {
		a := <-answers
		if a.err == nil {
			return nil
		}
		all = append(all, fmt.Errorf("%s: %w", a.name, a.err))
	}
	return errors.Join(all...)
}

// pingAnswer is one component's answer to a ping.
type pingAnswer struct {
	name string
	err  error
}

// pingParallel pings the open components keep accepts, all at once; their
// n answers arrive on answers (buffered: a caller that stops reading
// leaves no ping blocked).
func (c *Components) pingParallel(ctx context.Context, keep func(name string) bool) (answers <-chan pingAnswer, n int) {
	ch := make(chan pingAnswer, len(c.pings))
	for _, p := range c.pings {
		if !keep(p.name) {
			continue
		}
		n++
		go func() { ch <- pingAnswer{p.name, p.ping(ctx)} }()
	}
	return ch, n
}

// errDraining is the readiness answer of a process that is shutting down.
var errDraining = errors.New("shutting down")

// ready reports whether this process should get traffic: not draining,
// every component its targets need answers a ping within Timeouts.Ready,
// and no worker reports itself blocked (the indexer waiting for a
// component, indexer.Service.Ready).
func (s *Server) ready(ctx context.Context) error {
	if s.draining.Load() {
		return errDraining
	}
	if d := s.cfg.Timeouts.Ready; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var errs []error
	for _, g := range s.cfg.readyGroups() {
		if err := s.comps.PingAny(ctx, g); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range s.readyChecks {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readyz answers 200 when ready, else 503 with the reason, followed by
// one line per detail (the indexer's lag), which never makes a process
// unready: an indexer behind is catching up, and taking it out of
// service would not help. /healthz is liveness only: it answers 200
// while the process runs.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.ready(r.Context()); err != nil {
		gateway.MarkExpected(r.Context()) // draining or an outage: the answer the probe asks for, no fault
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
	} else {
		_, _ = w.Write([]byte("ready\n"))
	}
	for _, d := range s.readyDetails {
		_, _ = fmt.Fprintln(w, d())
	}
}

// indexerLag is the indexer's /readyz detail line.
func indexerLag(l indexer.Lag) string {
	return fmt.Sprintf("indexer: lag %d events, %.1f s", l.Events, l.Seconds)
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
