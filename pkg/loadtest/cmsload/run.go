package cmsload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
)

// Options of a complete load run.
type Options struct {
	Target Target
	// Objects to seed (default 200).
	Objects int
	Mix     []Weight
	// Load drives the system; the baseline runs with the same settings
	// except for its duration.
	Load loadtest.Config
	// BaselineDuration of the baseline phase (default: the same duration
	// and request limit as the system); its warm-up is at most 1 s.
	BaselineDuration time.Duration
	// SeedWait bounds the wait for the seed to show in Delivery (default 60 s).
	SeedWait time.Duration
	// Log receives the seeding and progress lines (nil = silent).
	Log io.Writer
	// Visibility, when set, replaces the mix and the baseline by the
	// write-visibility phase (MeasureVisibility).
	Visibility *VisibilityOptions
}

// Result of a run.
type Result struct {
	Data     *Data
	System   *loadtest.Report
	Baseline *loadtest.Report
	// Counts of the system phase (warm-up included).
	Counts *Counts
	// Visibility is the write-visibility phase's result, if it ran.
	Visibility *VisibilityReport
}

// Run seeds, drives the mix against the system and then the baseline with
// the same concurrency.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Objects <= 0 {
		o.Objects = 200
	}
	if o.SeedWait <= 0 {
		o.SeedWait = time.Minute
	}
	conc := max(1, o.Load.Concurrency)
	if o.Target.Client == nil {
		o.Target.Client = NewClient(conc)
	}
	o.Load.Progress = o.Log
	d, err := Seed(ctx, o.Target, o.Objects, o.SeedWait, o.Log)
	if err != nil {
		return nil, err
	}
	res := &Result{Data: d}
	if o.Visibility != nil {
		vo := *o.Visibility
		vo.Log = o.Log
		res.Visibility, err = MeasureVisibility(ctx, o.Target, d, vo)
		return res, err
	}
	cfg := o.Load
	cfg.Label = "system"
	ops, counts := Ops(o.Target, d, o.Mix)
	res.Counts = counts
	if res.System, err = loadtest.Run(ctx, cfg, ops); err != nil {
		return res, err
	}
	base, err := StartBaseline(d)
	if err != nil {
		return res, err
	}
	defer base.Close()
	cfg.Label = "baseline"
	cfg.Warmup = min(cfg.Warmup, time.Second)
	// Same limits as the system phase unless BaselineDuration is set.
	if o.BaselineDuration > 0 {
		cfg.Duration, cfg.Requests = o.BaselineDuration, 0
	}
	res.Baseline, err = loadtest.Run(ctx, cfg, []loadtest.Op{base.Op(NewClient(conc))})
	return res, err
}

// NewClient is an HTTP client keeping up to conns idle connections per host.
func NewClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(100, conns)
	tr.MaxIdleConnsPerHost = max(2, conns)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// Write prints the system table, the baseline row and the ratio lines:
// delivery-get against the baseline (same bytes) and the whole mix's
// throughput against the baseline's.
func (r *Result) Write(w io.Writer) error {
	if r.Visibility != nil {
		return r.Visibility.Print(w)
	}
	if r.System == nil {
		return nil
	}
	fmt.Fprintf(w, "\nsystem: %d workers, %v, %d objects seeded (type %s)\n", r.System.Concurrency, r.System.Elapsed.Round(time.Millisecond),
		len(r.Data.Objects), r.Data.TypeAPI)
	if err := r.System.WriteTable(w); err != nil {
		return err
	}
	if r.Counts != nil {
		fmt.Fprintf(w, "delivery-get: %d conditional requests answered 304 (warm-up included)\n", r.Counts.NotModified.Load())
	}
	if r.Baseline == nil {
		return nil
	}
	b := r.Baseline.Total
	b.Name = OpBaseline
	fmt.Fprintf(w, "\nbaseline: bare net/http on loopback serving the %d bytes of %s, %d workers, %v\n",
		len(r.Data.GetBody), r.Data.GetPath, r.Baseline.Concurrency, r.Baseline.Elapsed.Round(time.Millisecond))
	if err := (&loadtest.Report{Ops: nil, Total: b}).WriteTable(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if get, ok := r.System.Op(OpDeliveryGet); ok {
		if err := loadtest.WriteLatencyRatio(w, b, get); err != nil {
			return err
		}
	}
	if err := loadtest.WriteLatencyRatio(w, b, r.System.Total); err != nil {
		return err
	}
	return loadtest.WriteThroughputRatio(w, b, r.System.Total)
}
