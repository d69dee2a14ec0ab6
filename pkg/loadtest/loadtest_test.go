package loadtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

func msList(vals ...int) []time.Duration {
	out := make([]time.Duration, len(vals))
	for i, v := range vals {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one p50", msList(7), 0.5, 7 * time.Millisecond},
		{"one p99", msList(7), 0.99, 7 * time.Millisecond},
		{"1..100 p50", msList(hundred...), 0.50, 50 * time.Millisecond},
		{"1..100 p90", msList(hundred...), 0.90, 90 * time.Millisecond},
		{"1..100 p99", msList(hundred...), 0.99, 99 * time.Millisecond},
		{"1..100 p29 (float 28.999…)", msList(hundred...), 0.29, 29 * time.Millisecond},
		{"1..100 max", msList(hundred...), 1, 100 * time.Millisecond},
		{"1..100 q0 = min", msList(hundred...), 0, 1 * time.Millisecond},
		{"four p50", msList(1, 2, 3, 4), 0.50, 2 * time.Millisecond},
		{"four p51", msList(1, 2, 3, 4), 0.51, 3 * time.Millisecond},
		{"four p99", msList(1, 2, 3, 4), 0.99, 4 * time.Millisecond},
		{"ten p90", msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.90, 9 * time.Millisecond},
		{"ten p91", msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.91, 10 * time.Millisecond},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.q); got != c.want {
			t.Errorf("%s: Percentile(q=%v) = %v, want %v", c.name, c.q, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	durs := msList(40, 10, 30, 20) // unsorted on purpose
	s := Summarize("x", durs, 1, 2*time.Second, errors.New("boom"))
	want := Stats{Name: "x", Requests: 4, Errors: 1, Throughput: 2, Mean: 25 * time.Millisecond,
		P50: 20 * time.Millisecond, P90: 40 * time.Millisecond, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond}
	s.FirstError = nil
	if s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if r := s.ErrorRate(); r != 25 {
		t.Errorf("ErrorRate = %v, want 25", r)
	}
	if r := (Stats{}).ErrorRate(); r != 0 {
		t.Errorf("empty ErrorRate = %v", r)
	}
}

func TestCompare(t *testing.T) {
	base := Stats{P50: time.Millisecond, P99: 2 * time.Millisecond, Mean: time.Millisecond, Throughput: 1000}
	sys := Stats{Name: "get", P50: 4 * time.Millisecond, P99: 10 * time.Millisecond, Mean: 2 * time.Millisecond, Throughput: 250}
	got := Compare(base, sys)
	want := Ratio{P50: 25, P99: 20, Mean: 50, Throughput: 25}
	if got != want {
		t.Errorf("Compare = %+v, want %+v", got, want)
	}
	if z := Compare(base, Stats{}); z.P50 != 0 || z.Throughput != 0 {
		t.Errorf("Compare with empty system = %+v, want zeros for undefined latencies", z)
	}
	var buf bytes.Buffer
	if err := WriteLatencyRatio(&buf, base, sys); err != nil {
		t.Fatal(err)
	}
	if err := WriteThroughputRatio(&buf, base, sys); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"p50 25.0% (1.00 / 4.00 ms)", "p99 20.0%", "mean 50.0%", "throughput (system/baseline): 25.0% (250 / 1000 req/s)"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("WriteRatio output lacks %q:\n%s", s, buf.String())
		}
	}
}

func TestSchedule(t *testing.T) {
	nop := func(context.Context) error { return nil }
	ops := []Op{{"a", 5, nop}, {"b", 1, nop}, {"c", 1, nop}, {"zero", 0, nop}, {"nil", 3, nil}}
	got := schedule(ops)
	// nginx smooth WRR for weights 5,1,1: a a b a c a a.
	want := []int{0, 0, 1, 0, 2, 0, 0}
	if len(got) != len(want) {
		t.Fatalf("schedule = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("schedule = %v, want %v", got, want)
		}
	}
}

// TestRunRequests: a fixed request count with 4 workers gives exact
// per-op counts (the mix follows the request number) and exact errors.
func TestRunRequests(t *testing.T) {
	var calls atomic.Int64
	errBoom := errors.New("boom")
	var aCalls atomic.Int64
	ops := []Op{
		{Name: "a", Weight: 3, Do: func(context.Context) error {
			calls.Add(1)
			if aCalls.Add(1)%10 == 0 {
				return errBoom
			}
			return nil
		}},
		{Name: "b", Weight: 1, Do: func(context.Context) error { calls.Add(1); return nil }},
	}
	rep, err := Run(context.Background(), Config{Concurrency: 4, Requests: 1000}, ops)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1000 || rep.Total.Requests != 1000 {
		t.Fatalf("calls %d, total %d, want 1000", calls.Load(), rep.Total.Requests)
	}
	a, _ := rep.Op("a")
	b, _ := rep.Op("b")
	if a.Requests != 750 || b.Requests != 250 {
		t.Errorf("a %d b %d, want 750 and 250", a.Requests, b.Requests)
	}
	if a.Errors != 75 || b.Errors != 0 || rep.Total.Errors != 75 {
		t.Errorf("errors a %d b %d total %d, want 75 0 75", a.Errors, b.Errors, rep.Total.Errors)
	}
	if !errors.Is(a.FirstError, errBoom) {
		t.Errorf("FirstError = %v", a.FirstError)
	}
	if rep.Concurrency != 4 || rep.Elapsed <= 0 || rep.Total.Throughput <= 0 {
		t.Errorf("report %+v", rep)
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"operation", "p99-ms", "total", "a: 75 errors, e.g. boom"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
}

// TestRunDuration: a timed run with a warm-up and a progress writer; the
// fake op sleeps 2 ms, so 2 workers over 300 ms do at most 300 requests.
func TestRunDuration(t *testing.T) {
	var calls atomic.Int64
	op := Op{Name: "sleep", Weight: 1, Do: func(context.Context) error {
		calls.Add(1)
		time.Sleep(2 * time.Millisecond)
		return nil
	}}
	var prog testenv.Buffer
	rep, err := Run(context.Background(), Config{Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 150 * time.Millisecond,
		Progress: &prog, ProgressEvery: 100 * time.Millisecond, Label: "t"}, []Op{op})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Total.Requests
	if n < 10 || n > 300 {
		t.Errorf("requests %d, want 10..300 for 2 workers × 300 ms of 2 ms ops", n)
	}
	if calls.Load() <= n {
		t.Errorf("calls %d ≤ measured %d: the warm-up did not run or was counted", calls.Load(), n)
	}
	if rep.Elapsed < 300*time.Millisecond {
		t.Errorf("elapsed %v < duration", rep.Elapsed)
	}
	if rep.Total.P50 < 2*time.Millisecond || rep.Total.Max < rep.Total.P99 || rep.Total.P99 < rep.Total.P50 {
		t.Errorf("latencies %+v: want p50 ≥ 2ms and p50 ≤ p99 ≤ max", rep.Total)
	}
	out := prog.String()
	if !strings.Contains(out, "t warm-up") || strings.Count(out, "\nt ") < 2 || !strings.Contains(out, "req/s") {
		t.Errorf("progress output:\n%s", out)
	}
}

// TestRunCancel: cancelling stops the run; failures caused by the
// cancellation are not counted.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	op := Op{Name: "x", Weight: 1, Do: func(ctx context.Context) error {
		if n.Add(1) == 20 {
			cancel()
		}
		return ctx.Err()
	}}
	rep, err := Run(ctx, Config{Concurrency: 1, Duration: time.Minute}, []Op{op})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rep.Total.Requests != 19 || rep.Total.Errors != 0 {
		t.Errorf("requests %d errors %d, want 19 and 0", rep.Total.Requests, rep.Total.Errors)
	}
}

func TestRunInvalid(t *testing.T) {
	if _, err := Run(context.Background(), Config{Requests: 1}, []Op{{Name: "x", Weight: 0, Do: func(context.Context) error { return nil }}}); !errors.Is(err, ErrNoOps) {
		t.Errorf("zero weights: %v", err)
	}
	if _, err := Run(context.Background(), Config{}, []Op{{Name: "x", Weight: 1, Do: func(context.Context) error { return nil }}}); !errors.Is(err, ErrNoLimit) {
		t.Errorf("no limit: %v", err)
	}
}
