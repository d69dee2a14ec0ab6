package templates

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// errBatchTooLarge is a job whose output does not fit the batch's total.
var errBatchTooLarge = errkind.New(errkind.TooLarge, "batch output limit")

// BatchResult is one job's outcome: its result or its error.
type BatchResult struct {
	Result Result
	Err    error
}

// RenderBatch renders jobs, at most Limits.BatchConcurrency at a time,
// each independently: a failing job has its error in its result and does
// not stop the others. More than Limits.MaxBatch jobs is invalid (400).
// The outputs together hold at most Limits.MaxBatchBytes: a job whose
// output would go beyond fails with errkind.TooLarge (its output is
// dropped), so a batch holds bounded memory.
func (s *Service) RenderBatch(ctx context.Context, jobs []Request) ([]BatchResult, error) {
	if len(jobs) == 0 {
		return nil, invalidf("a batch needs at least one job")
	}
	if len(jobs) > s.limits.MaxBatch {
		return nil, invalidf("a batch has at most %d jobs, got %d", s.limits.MaxBatch, len(jobs))
	}
	out := make([]BatchResult, len(jobs))
	slots := make(chan struct{}, s.limits.BatchConcurrency)
	var total atomic.Int64
	var wg sync.WaitGroup
	for i, job := range jobs {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < len(jobs); j++ {
				out[j].Err = ctx.Err()
			}
			wg.Wait()
			return out, nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			res, err := s.Render(ctx, job)
			if err == nil && total.Add(int64(len(res.HTML))) > int64(s.limits.MaxBatchBytes) {
				res, err = Result{}, fmt.Errorf("%w: the outputs of a batch hold at most %d bytes", errBatchTooLarge, s.limits.MaxBatchBytes)
			}
			out[i] = BatchResult{Result: res, Err: err}
		}()
	}
	wg.Wait()
	return out, nil
}
