package cmsload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/loadtest"
)

// Operation names of the write-visibility phase.
const (
	OpWrite        = "write"         // the PATCH, until its answer
	OpWriteVisible = "write→visible" // from sending the PATCH until Delivery serves its transaction
)

// VisibilityOptions configure MeasureVisibility.
type VisibilityOptions struct {
	// Rate is the writes started per second (open loop: a slow answer
	// does not delay the next write).
	Rate float64
	// Duration of the phase.
	Duration time.Duration
	// MaxInFlight bounds the writes waiting for an answer or for
	// visibility (default 1,000); a write due while that many are pending
	// is skipped and counted.
	MaxInFlight int
	// MaxWait bounds the wait for one write to become visible (default
	// 30 s); longer counts as an error.
	MaxWait time.Duration
	// Log receives a progress line per second (nil = silent).
	Log io.Writer
}

// VisibilityReport is the result of MeasureVisibility.
type VisibilityReport struct {
	Rate     float64 // writes/s asked for
	Elapsed  time.Duration
	Skipped  int64 // writes not started: MaxInFlight were pending
	Write    loadtest.Stats
	Visible  loadtest.Stats
	Duration time.Duration
}

// MeasureVisibility writes one value of a seeded object at a fixed rate
// and measures for each write how long it takes until it is searchable:
// from sending the PATCH until Delivery serves the write's transaction
// (X-Cms-Min-Version, see prober).
func MeasureVisibility(ctx context.Context, t Target, d *Data, o VisibilityOptions) (*VisibilityReport, error) {
	if o.Rate <= 0 || o.Duration <= 0 {
		return nil, errors.New("visibility: rate and duration must be positive")
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 1000
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 30 * time.Second
	}
	var (
		mu                 sync.Mutex
		writes, visible    []time.Duration
		writeErrs, visErrs int64
		firstWE, firstVE   error
		skipped            int64
	)
	record := func(dst *[]time.Duration, errs *int64, first *error, dur time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		*dst = append(*dst, dur)
		if err != nil {
			*errs++
			if *first == nil {
				*first = err
			}
		}
	}
	p := newProber(t, d.Objects[0], o.MaxWait)
	pctx, stopProber := context.WithCancel(ctx)
	proberDone := make(chan struct{})
	go func() { p.run(pctx); close(proberDone) }()
	sem := make(chan struct{}, o.MaxInFlight)
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / o.Rate)
	start := time.Now()
	next := start
	lastLog := start
	for i := 0; time.Since(start) < o.Duration && ctx.Err() == nil; i++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(interval)
		select {
		case sem <- struct{}{}:
		default:
			mu.Lock()
			skipped++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := d.Objects[i%len(d.Objects)]
			t0 := time.Now()
			tx, err := t.writeNote(ctx, d, id, i)
			record(&writes, &writeErrs, &firstWE, time.Since(t0), err)
			if err != nil {
				return
			}
			err = p.await(tx)
			record(&visible, &visErrs, &firstVE, time.Since(t0), err)
		}()
		if o.Log != nil && time.Since(lastLog) >= time.Second {
			lastLog = time.Now()
			mu.Lock()
			fmt.Fprintf(o.Log, "visibility: %.0fs, %d writes answered, %d visible, %d skipped\n",
				time.Since(start).Seconds(), len(writes), len(visible), skipped)
			mu.Unlock()
		}
	}
	elapsed := time.Since(start)
	wg.Wait()
	stopProber()
	<-proberDone
	return &VisibilityReport{
		Rate: o.Rate, Elapsed: elapsed, Skipped: skipped, Duration: o.Duration,
		Write:   loadtest.Summarize(OpWrite, writes, writeErrs, elapsed, firstWE),
		Visible: loadtest.Summarize(OpWriteVisible, visible, visErrs, elapsed, firstVE),
	}, nil
}

// writeNote PATCHes the note of object id and returns the transaction.
func (t Target) writeNote(ctx context.Context, d *Data, id, i int) (int64, error) {
	body := fmt.Sprintf(`{"comment":"visibility","objects":[{"meta":{"id":%d,"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":"visible %d"}]}]}`,
		id, d.Type, d.Note, i)
	_, b, _, err := t.do(ctx, http.MethodPatch, fmt.Sprintf("%s/branches/%d/objects", managementPath, t.Branch), []byte(body), nil, http.StatusOK)
	if err != nil {
		return 0, err
	}
	r, err := parseCreate(b)
	return r.TransactionID, err
}

// prober finds out when transactions become visible in Delivery with
// one request at a time, whatever the number of writes pending: it asks
// for an object with X-Cms-Min-Version and a wait of 1 ms (200 when the
// index has applied the version, 503 otherwise), binary-searching the
// newest visible one among the pending transactions. (One long-polling
// request per pending write would have the server poll its index
// version for each of them.)
type prober struct {
	t       Target
	path    string
	maxWait time.Duration

	mu      sync.Mutex
	pending map[int64][]chan error // by transaction
}

func newProber(t Target, object int, maxWait time.Duration) *prober {
	return &prober{t: t, path: fmt.Sprintf("%s/branches/%d/objects/%d", deliveryPath, t.Branch, object),
		maxWait: maxWait, pending: map[int64][]chan error{}}
}

// await returns when tx is visible (nil) or after maxWait (an error).
func (p *prober) await(tx int64) error {
	ch := make(chan error, 1)
	p.mu.Lock()
	p.pending[tx] = append(p.pending[tx], ch)
	p.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-time.After(p.maxWait):
		return fmt.Errorf("transaction %d not visible in Delivery after %v", tx, p.maxWait)
	}
}

// visible reports whether Delivery serves version tx.
func (p *prober) visible(ctx context.Context, tx int64) bool {
	hdr := map[string]string{"X-Cms-Min-Version": strconv.FormatInt(tx, 10), "X-Cms-Max-Wait": "1"}
	_, _, _, err := p.t.do(ctx, http.MethodGet, p.path, nil, hdr, http.StatusOK)
	return err == nil
}

// run probes until ctx ends.
func (p *prober) run(ctx context.Context) {
	for ctx.Err() == nil {
		p.mu.Lock()
		txs := make([]int64, 0, len(p.pending))
		for tx := range p.pending {
			txs = append(txs, tx)
		}
		p.mu.Unlock()
		if len(txs) == 0 {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		slices.Sort(txs)
		// The newest visible: visibility is monotonic in the version.
		lo, hi := -1, len(txs)-1 // txs[:lo+1] visible, txs[hi+1:] not
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if p.visible(ctx, txs[mid]) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		p.mu.Lock()
		for _, tx := range txs[:lo+1] {
			for _, ch := range p.pending[tx] {
				ch <- nil
			}
			delete(p.pending, tx)
		}
		p.mu.Unlock()
		if lo < len(txs)-1 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// Print writes the phase: the achieved rate, then a row for the writes'
// answers and one for write → visible.
func (r *VisibilityReport) Print(w io.Writer) error {
	_, err := fmt.Fprintf(w, "\nwrite visibility: %.0f writes/s asked for %v, %.1f/s answered, %d skipped (too many pending)\n",
		r.Rate, r.Duration, r.Write.Throughput, r.Skipped)
	if err != nil {
		return err
	}
	rep := &loadtest.Report{Ops: []loadtest.Stats{r.Write}, Total: r.Visible}
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	if r.Visible.FirstError != nil {
		_, err = fmt.Fprintf(w, "%s: %d errors, e.g. %v\n", r.Visible.Name, r.Visible.Errors, r.Visible.FirstError)
	}
	return err
}
