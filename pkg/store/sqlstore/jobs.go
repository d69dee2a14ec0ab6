package sqlstore

import (
	"context"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.JobReader on reader and store.JobWriter on
// writeTx.

func (r reader) GetJob(ctx context.Context, id int64) (store.Job, error) {
	return one[store.Job](r.d, "job", id)(r.queryJobs(ctx, r.st.getJob, id))
}

func (r reader) ListJobs(ctx context.Context, q store.JobQuery) ([]store.Job, error) {
	b := r.newQuery()
	b.add(r.st.selectJobs)
	if q.Branch != nil {
		b.where(`branch = ?`, *q.Branch)
	}
	if q.Definition != nil {
		b.where(`definition_id = ?`, *q.Definition)
	}
	if q.Trigger != nil {
		b.where(`trigger_id = ?`, *q.Trigger)
	}
	if q.State != nil {
		b.where(`state = ?`, *q.State)
	}
	if q.User != "" {
		b.where(`user_key = ?`, store.CommentUserKey(q.User))
	}
	b.newestFirst(q.Deleted, q.BeforeID, q.Limit)
	return r.queryJobs(ctx, b.sql(), b.args...)
}

func (r reader) queryJobs(ctx context.Context, query string, args ...any) ([]store.Job, error) {
	scan := func(rows Rows, j *store.Job) error {
		var doc string
		err := rows.Scan(&j.ID, &j.Branch, &j.Definition, &j.Trigger, &j.User, &j.State, &j.Deleted, &doc,
			r.d.TimeDest(&j.Created), r.d.TimeDest(&j.Modified))
		j.Doc = []byte(doc)
		j.Created, j.Modified = j.Created.UTC(), j.Modified.UTC()
		return err
	}
	return collect(ctx, r.d, r.q, "query jobs", scan, query, args...)
}

func (t *writeTx) InsertJob(ctx context.Context, j store.Job) (store.Job, error) {
	if err := t.check(); err != nil {
		return store.Job{}, err
	}
	if err := store.CheckJob(j); err != nil {
		return store.Job{}, err
	}
	if err := t.g.tx.QueryRow(ctx, t.st.allocateJobID).Scan(&j.ID); err != nil {
		return store.Job{}, errorf(t.d, err, "allocate job id")
	}
	j.Created, j.Modified = t.meta.Time, t.meta.Time
	at := t.d.TimeArg(t.meta.Time)
	_, err := t.g.tx.Exec(ctx, t.st.insertJob, j.ID, j.Branch, j.Definition, j.Trigger, j.User,
		store.CommentUserKey(j.User), j.State, string(j.Doc), at, at)
	if err != nil {
		return store.Job{}, errorf(t.d, err, "insert job")
	}
	j.Deleted = false
	return j, nil
}

func (t *writeTx) UpdateJob(ctx context.Context, j store.Job) error {
	if err := t.check(); err != nil {
		return err
	}
	n, err := t.g.tx.Exec(ctx, t.st.updateJob, j.State, j.Deleted, string(j.Doc), t.d.TimeArg(t.meta.Time), j.ID)
	if err != nil {
		return errorf(t.d, err, "update job %d", j.ID)
	}
	if n == 0 {
		return notFound(t.d, "job %d", j.ID)
	}
	return nil
}
