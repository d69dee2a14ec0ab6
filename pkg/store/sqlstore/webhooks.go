package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.WebhookLog on Store: appends and prunes run
// on the Write querier outside write transactions, the listing on Read.

// webhookRows are the row counts of the INSERT statements that
// AppendWebhookAttempts combines (a fixed set of statement texts, so the
// drivers' statement caches stay small), largest first.
var webhookRows = []int{64, 8, 1}

// AppendWebhookAttempts implements store.WebhookLog: multi-row INSERTs
// of webhookRows rows, in one batch (one round trip on PostgreSQL).
func (s *Store) AppendWebhookAttempts(ctx context.Context, attempts []store.WebhookAttempt) error {
	if len(attempts) == 0 {
		return nil
	}
	for _, a := range attempts {
		if err := store.CheckWebhookAttempt(a); err != nil {
			return err
		}
	}
	err := s.cfg.Write.ExecBatch(ctx, func(b Batch) {
		rest := attempts
		for i, n := range webhookRows {
			for len(rest) >= n {
				args := make([]any, 0, n*11)
				for _, a := range rest[:n] {
					args = append(args, a.WebHook, a.Delivery, a.Transaction, a.Branch, a.Kind, a.Attempt,
						s.d.TimeArg(a.Time.UTC().Truncate(time.Microsecond)), a.Duration.Microseconds(), a.Status, a.Error, a.Outcome)
				}
				b.Queue(s.st.insertWebhookAttempts[i], args...)
				rest = rest[n:]
			}
		}
	})
	if err != nil {
		return errorf(s.d, err, "append webhook attempts")
	}
	return nil
}

// insertWebhookRows returns the INSERT statements of webhookRows.
func insertWebhookRows(d Dialect, columns string) []string {
	out := make([]string, len(webhookRows))
	for i, n := range webhookRows {
		out[i] = d.Rebind(`INSERT INTO webhook_attempts (` + columns + `) VALUES ` +
			strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), `, n-1) + `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	}
	return out
}

// ListWebhookAttempts implements store.WebhookLog.
func (s *Store) ListWebhookAttempts(ctx context.Context, q store.WebhookAttemptQuery) ([]store.WebhookAttempt, error) {
	before, limit := pageBounds(q.BeforeID, q.Limit)
	scan := func(rows Rows, a *store.WebhookAttempt) error {
		var us int64
		err := rows.Scan(&a.ID, &a.WebHook, &a.Delivery, &a.Transaction, &a.Branch, &a.Kind, &a.Attempt,
			s.d.TimeDest(&a.Time), &us, &a.Status, &a.Error, &a.Outcome)
		a.Time, a.Duration = a.Time.UTC(), time.Duration(us)*time.Microsecond
		return err
	}
	return collect(ctx, s.d, s.q, "list webhook attempts", scan, s.st.selectWebhookAttempts, q.WebHook, before, limit)
}

// PruneWebhookAttempts implements store.WebhookLog: by age first, then
// by count per webhook, within one budget of p.Limit rows.
func (s *Store) PruneWebhookAttempts(ctx context.Context, p store.WebhookPrune) (int, error) {
	if p.Limit <= 0 {
		return 0, fmt.Errorf("%w: prune limit %d must be positive", store.ErrInvalidArgument, p.Limit)
	}
	var deleted int64
	if !p.Before.IsZero() {
		n, err := s.cfg.Write.Exec(ctx, s.st.pruneWebhookAge, s.d.TimeArg(p.Before.UTC()), p.Limit)
		if err != nil {
			return 0, errorf(s.d, err, "prune webhook attempts")
		}
		deleted += n
	}
	for _, hook := range p.WebHooks {
		if p.Keep <= 0 || deleted >= int64(p.Limit) {
			break
		}
		n, err := s.cfg.Write.Exec(ctx, s.st.pruneWebhookCount, hook, hook, p.Keep, int64(p.Limit)-deleted)
		if err != nil {
			return int(deleted), errorf(s.d, err, "prune webhook %d attempts", hook)
		}
		deleted += n
	}
	return int(deleted), nil
}
