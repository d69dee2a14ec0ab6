package loadtest

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"
)

// Stats summarises the requests of one operation (or all of them).
type Stats struct {
	Name     string
	Requests int64
	Errors   int64
	// Throughput is Requests per second of the phase's wall time.
	Throughput         float64
	Mean               time.Duration
	P50, P90, P99, Max time.Duration
	// FirstError is one of the errors seen, for the report; nil if none.
	FirstError error
}

// ErrorRate is the failed share of the requests in percent (0 when none ran).
func (s Stats) ErrorRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return 100 * float64(s.Errors) / float64(s.Requests)
}

// Report is the result of one measured phase.
type Report struct {
	Concurrency int
	Elapsed     time.Duration
	Ops         []Stats
	Total       Stats
}

// Op returns the stats of the named operation.
func (r *Report) Op(name string) (Stats, bool) {
	for _, s := range r.Ops {
		if s.Name == name {
			return s, true
		}
	}
	return Stats{}, false
}

// Summarize computes the stats of durs (every request's latency, failed
// ones included), errs failures, over a phase of elapsed wall time.
// durs is sorted in place.
func Summarize(name string, durs []time.Duration, errs int64, elapsed time.Duration, firstErr error) Stats {
	slices.Sort(durs)
	s := Stats{Name: name, Requests: int64(len(durs)), Errors: errs, FirstError: firstErr,
		P50: Percentile(durs, 0.50), P90: Percentile(durs, 0.90), P99: Percentile(durs, 0.99), Max: Percentile(durs, 1)}
	if len(durs) > 0 {
		var sum time.Duration
		for _, d := range durs {
			sum += d
		}
		s.Mean = sum / time.Duration(len(durs))
	}
	if elapsed > 0 {
		s.Throughput = float64(len(durs)) / elapsed.Seconds()
	}
	return s
}

// Percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted:
// the smallest value such that at least q of the values are ≤ it, i.e.
// sorted[ceil(q·n)-1]. It returns 0 for an empty slice; q ≤ 0 gives the
// minimum.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// Rounded to 1e-9 first so that 0.29·100 (28.999…) still ranks 29.
	rank := int(math.Ceil(math.Round(q*float64(n)*1e9) / 1e9))
	return sorted[min(max(rank, 1), n)-1]
}

// WriteTable writes the report as an aligned table, one row per operation
// and a total row, latencies in milliseconds.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\trequests\terrors\terr-%\treq/s\tmean-ms\tp50-ms\tp90-ms\tp99-ms\tmax-ms\t")
	row := func(s Stats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Requests, s.Errors, s.ErrorRate(),
			s.Throughput, ms(s.Mean), ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max))
	}
	for _, s := range r.Ops {
		row(s)
	}
	row(r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Ops {
		if s.FirstError != nil {
			if _, err := fmt.Fprintf(w, "%s: %d errors, e.g. %v\n", s.Name, s.Errors, s.FirstError); err != nil {
				return err
			}
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", Millis(d)) }

// Millis is d in (fractional) milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Ratio compares a system's stats with a baseline measured in the same
// run: latencies as baseline / system in percent (100 = as fast as the
// baseline), throughput as system / baseline in percent.
type Ratio struct {
	P50, P99, Mean, Throughput float64
}

// Compare returns the ratios of sys against base (0 where undefined).
func Compare(base, sys Stats) Ratio {
	pct := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * a / b
	}
	return Ratio{
		P50:        pct(float64(base.P50), float64(sys.P50)),
		P99:        pct(float64(base.P99), float64(sys.P99)),
		Mean:       pct(float64(base.Mean), float64(sys.Mean)),
		Throughput: pct(sys.Throughput, base.Throughput),
	}
}

// WriteLatencyRatio writes one line comparing sys's latencies with base's.
func WriteLatencyRatio(w io.Writer, base, sys Stats) error {
	r := Compare(base, sys)
	_, err := fmt.Fprintf(w, "ratio %s latency (baseline/system): p50 %.1f%% (%s / %s ms), p99 %.1f%% (%s / %s ms), mean %.1f%%\n",
		sys.Name, r.P50, ms(base.P50), ms(sys.P50), r.P99, ms(base.P99), ms(sys.P99), r.Mean)
	return err
}

// WriteThroughputRatio writes one line comparing sys's throughput with base's.
func WriteThroughputRatio(w io.Writer, base, sys Stats) error {
	r := Compare(base, sys)
	_, err := fmt.Fprintf(w, "ratio %s throughput (system/baseline): %.1f%% (%.0f / %.0f req/s)\n",
		sys.Name, r.Throughput, sys.Throughput, base.Throughput)
	return err
}
