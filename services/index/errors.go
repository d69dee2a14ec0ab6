package index

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// toStatus maps domain errors with the one mapping of all groups
// (gateway.DomainStatus). Index requests carry the client's query into the
// engine, so a query the engine refuses is the client's mistake (400).
func (s *service) toStatus(ctx context.Context, err error) error {
	if errors.Is(err, search.ErrInvalidQuery) {
		// The engine's reason names its fields and components: logged, and
		// the client told what it can change.
		s.log.LogAttrs(ctx, slog.LevelInfo, "index: query refused by the search engine", slog.String("error", err.Error()))
		return status.Error(codes.InvalidArgument, "the index cannot run this query: check the filter's fields and values, the sort and the page")
	}
	return gateway.DomainStatus(ctx, s.log, "index", err)
}
