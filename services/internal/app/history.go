package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

// pruneHistory deletes the object history older than the retention
// (content.Service.PruneHistory) every interval until ctx ends: each pass
// walks the transactions older than the retention batch by batch. Several
// processes pruning at once delete nothing twice.
func pruneHistory(svc *content.Service, every time.Duration, log *slog.Logger) func(context.Context) error {
	return periodically(every, func(ctx context.Context) {
		total, after := 0, int64(0)
		for {
			n, next, err := svc.PruneHistory(ctx, time.Now(), after)
			total += n
			if err != nil && ctx.Err() == nil {
				log.Warn("pruning object history", "err", err)
			}
			if err != nil || next == 0 {
				break
			}
			after = next
		}
		if total > 0 {
			log.Info("pruned object history", "versions", total, "retention", svc.HistoryRetention().String())
		}
	})
}

// periodically returns a background task that runs pass every interval
// (the first after one interval) until its context ends.
func periodically(every time.Duration, pass func(context.Context)) func(context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				pass(ctx)
			}
		}
	}
}
