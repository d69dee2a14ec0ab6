package cmsload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
// from sending the PATCH until Delivery answers the object with
// X-Cms-Min-Version set to the write's transaction (Delivery answers once
// its index has applied that transaction, and holds the request until then
// up to X-Cms-Max-Wait).
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
			err = t.awaitVersion(ctx, id, tx, o.MaxWait)
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

// awaitVersion asks Delivery for object id with X-Cms-Min-Version tx until
// it answers 200 or maxWait has passed.
func (t Target) awaitVersion(ctx context.Context, id int, tx int64, maxWait time.Duration) error {
	path := fmt.Sprintf("%s/branches/%d/objects/%d", deliveryPath, t.Branch, id)
	deadline := time.Now().Add(maxWait)
	for {
		left := time.Until(deadline)
		hdr := map[string]string{"X-Cms-Min-Version": strconv.FormatInt(tx, 10),
			"X-Cms-Max-Wait": strconv.Itoa(max(1, int(min(left, 5*time.Second)/time.Second))) + "s"}
		_, _, _, err := t.do(ctx, http.MethodGet, path, nil, hdr, http.StatusOK)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
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
