package templates

import (
	"context"
	"sync"
)

// BatchResult is one job's outcome: its result or its error.
type BatchResult struct {
	Result Result
	Err    error
}

// RenderBatch renders jobs, at most Limits.BatchConcurrency at a time,
// each independently: a failing job has its error in its result and does
// not stop the others. More than Limits.MaxBatch jobs is invalid (400).
func (s *Service) RenderBatch(ctx context.Context, jobs []Request) ([]BatchResult, error) {
	if len(jobs) == 0 {
		return nil, invalidf("a batch needs at least one job")
	}
	if len(jobs) > s.limits.MaxBatch {
		return nil, invalidf("a batch has at most %d jobs, got %d", s.limits.MaxBatch, len(jobs))
	}
	out := make([]BatchResult, len(jobs))
	slots := make(chan struct{}, s.limits.BatchConcurrency)
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
			out[i] = BatchResult{Result: res, Err: err}
		}()
	}
	wg.Wait()
	return out, nil
}
