package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/services/delivery"
	"github.com/cmsplatform/cms/services/index"
	"github.com/cmsplatform/cms/services/indexer"
	"github.com/cmsplatform/cms/services/management"
	"github.com/cmsplatform/cms/services/rendering"
)

// buildTargets returns the API groups and background workers of the
// configured targets. The indexer has no API, only its consumer loop.
func buildTargets(ctx context.Context, cfg Config, comps *Components, log *slog.Logger) ([]Group, []func(context.Context) error, error) {
	var groups []Group
	var workers []func(context.Context) error
	for _, t := range cfg.Targets() {
		switch t {
		case TargetManagement:
			// Management writes; its relay publishes the outbox. Several
			// replicas may run it: claims are leased (SKIP LOCKED).
			relay := outbox.New(comps.Store, comps.Events, outbox.Options{Logger: log.With("worker", "outbox")})
			workers = append(workers, relay.Run)
			// The system model (types, attributes, languages, branch 4) is
			// written once, idempotently, in one transaction.
			if err := content.Bootstrap(ctx, comps.Store); err != nil {
				return nil, nil, fmt.Errorf("bootstrap the system model: %w", err)
			}
			st := notifyingStore{Store: comps.Store, notify: relay.Notify}
			svc := content.New(st, log.With("component", "content"))
			groups = append(groups, management.New(management.Options{
				MaxUploadBytes: cfg.MaxUploadBytes, Content: svc, Logger: log,
			}))
		case TargetDelivery:
			groups = append(groups, delivery.New())
		case TargetRendering:
			groups = append(groups, rendering.New())
		case TargetIndex:
			groups = append(groups, index.New())
		case TargetIndexer:
			ix := indexer.New(comps.Events, comps.Store, comps.Search, log.With("worker", "indexer"),
				indexer.Options{Indexing: cfg.indexing(log)})
			workers = append(workers, ix.Run)
		}
	}
	return groups, workers, nil
}

// indexing is the one place the index layout is configured: the indexer
// writes with it and the read services (Index, Delivery) read with it.
func (c Config) indexing(log *slog.Logger) indexing.Options {
	return indexing.Options{Logger: log.With("component", "indexing")}
}
