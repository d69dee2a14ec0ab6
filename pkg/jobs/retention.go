package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/store"
)

// retentionPage is how many finished jobs one listing query reads.
const retentionPage = 500

// RemoveExpired removes the finished jobs whose retainUntil lies before
// now: each is marked deleted (with a note in stateMessage), and its log
// and artifacts are deleted from the blob component. Jobs still New or
// Running are kept whatever their retainUntil. It returns how many jobs it
// removed; a job whose blobs could not all be deleted is tried again by
// the next call. Runners call it every RunnerOptions.RemoveExpiredEvery.
func (s *Service) RemoveExpired(ctx context.Context, now time.Time) (int, error) {
	removed := 0
	for _, state := range []int{StateSucceeded, StateError} {
		q := store.JobQuery{State: &state, Limit: retentionPage}
		for {
			rows, err := s.st.ListJobs(ctx, q)
			if err != nil {
				return removed, err
			}
			for _, row := range rows {
				j, err := fromRow(row)
				if err != nil {
					return removed, err
				}
				if !expired(j, now) {
					continue
				}
				if err := s.remove(ctx, j.ID, now); err != nil {
					return removed, fmt.Errorf("jobs: remove job %d: %w", j.ID, err)
				}
				removed++
			}
			if len(rows) < retentionPage {
				break
			}
			q.BeforeID = rows[len(rows)-1].ID
		}
	}
	return removed, nil
}

func expired(j Job, now time.Time) bool {
	return j.Terminal() && j.Removed == nil && j.RetainUntil != nil && j.RetainUntil.Before(now)
}

// remove marks job id deleted (if it is still expired: its retention may
// have been extended meanwhile), deletes its blobs, then records that
// they are gone.
func (s *Service) remove(ctx context.Context, id int64, now time.Time) error {
	err := s.change(ctx, id, "system", "remove expired job", func(j *Job) error {
		if !expired(*j, now) {
			return errSkip
		}
		j.Deleted, j.Artifacts = true, nil
		j.StateMessage += fmt.Sprintf(" (removed: retained until %s)", j.RetainUntil.UTC().Format(time.RFC3339))
		return nil
	}, nil)
	if errors.Is(err, errSkip) {
		return nil
	}
	if err != nil {
		return err
	}
	var keys []string
	if err := s.blobs.Walk(ctx, jobPrefix(id), func(i blobs.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.blobs.Delete(ctx, k); err != nil && !errors.Is(err, blobs.ErrNotFound) {
			return err
		}
	}
	return s.change(ctx, id, "system", "removed expired job", func(j *Job) error {
		j.Removed = &now
		return nil
	}, nil)
}
