package content

import (
	"context"
	"time"
)

// History retention (WithHistoryRetention): by default every version is
// kept for ever, so a read as of any transaction and a revert to it stay
// possible. With a retention the versions older than it are pruned, except
// the newest of each value and row (the present state is never lost).

// historyPruneBatch is how many transactions one PruneHistory statement
// covers.
const historyPruneBatch = 1000

// WithHistoryRetention sets how long object history is kept; 0 (the
// default) keeps it for ever. Reads and reverts as of a transaction older
// than the retention are ErrInvalid.
func WithHistoryRetention(d time.Duration) Option {
	return func(s *Service) { s.historyRetention = max(d, 0) }
}

// HistoryRetention is the retention set with WithHistoryRetention.
func (s *Service) HistoryRetention() time.Duration { return s.historyRetention }

// PruneHistory deletes the versions written by the up to
// historyPruneBatch oldest transactions after afterTx older than the
// retention; it returns how many it deleted and the transaction to pass
// as afterTx next (0: nothing older is left, start again from 0 later).
// Without a retention it does nothing.
func (s *Service) PruneHistory(ctx context.Context, now time.Time, afterTx int64) (int, int64, error) {
	if s.historyRetention <= 0 {
		return 0, 0, nil
	}
	return s.st.PruneHistory(ctx, now.Add(-s.historyRetention), afterTx, historyPruneBatch)
}
