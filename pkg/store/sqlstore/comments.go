package sqlstore

import (
	"context"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.CommentReader on reader and
// store.CommentWriter on writeTx.

func (r reader) GetComment(ctx context.Context, id int64) (store.Comment, error) {
	return one[store.Comment](r.d, "comment", id)(r.queryComments(ctx, r.st.getComment, id))
}

// one returns the single row of a by-id query, or ErrNotFound naming
// what and id.
func one[T any](d Dialect, what string, id int64) func([]T, error) (T, error) {
	return func(rows []T, err error) (T, error) {
		var zero T
		if err != nil {
			return zero, err
		}
		if len(rows) == 0 {
			return zero, notFound(d, "%s %d", what, id)
		}
		return rows[0], nil
	}
}

func (r reader) ListComments(ctx context.Context, q store.CommentQuery) ([]store.Comment, error) {
	b := r.newQuery()
	b.add(r.st.selectComments)
	if q.Branch != nil {
		b.where(`branch = ?`, *q.Branch)
	}
	if q.ObjectID != nil {
		b.where(`object_id = ?`, *q.ObjectID)
	}
	if q.User != "" {
		b.where(`user_key = ?`, store.CommentUserKey(q.User))
	}
	b.newestFirst(q.Deleted, q.BeforeID, q.Limit)
	return r.queryComments(ctx, b.sql(), b.args...)
}

// newestFirst ends a list of rows with a deleted flag and int64 ids
// (comments, jobs): the deleted filter (nil: both), keyset paging below
// beforeID (0: from the newest), id descending, at most limit rows (<= 0:
// all).
func (q *query) newestFirst(deleted *bool, beforeID int64, limit int) {
	if deleted != nil {
		q.where(`deleted = ?`, *deleted)
	}
	if beforeID > 0 {
		q.where(`id < ?`, beforeID)
	}
	q.add(` ORDER BY id DESC`)
	if limit > 0 {
		q.add(` LIMIT ?`, limit)
	}
}

func (r reader) queryComments(ctx context.Context, query string, args ...any) ([]store.Comment, error) {
	scan := func(rows Rows, c *store.Comment) error {
		err := rows.Scan(&c.ID, &c.Branch, &c.ObjectID, &c.User, &c.Body, &c.Deleted,
			r.d.TimeDest(&c.Created), r.d.TimeDest(&c.Modified), &c.CreatedTx, &c.ModifiedTx)
		c.Created, c.Modified = c.Created.UTC(), c.Modified.UTC()
		return err
	}
	return collect(ctx, r.d, r.q, "query comments", scan, query, args...)
}

func (t *writeTx) InsertComment(ctx context.Context, c store.Comment) (store.Comment, error) {
	if err := t.check(); err != nil {
		return store.Comment{}, err
	}
	if err := store.CheckComment(c); err != nil {
		return store.Comment{}, err
	}
	if err := t.g.tx.QueryRow(ctx, t.st.allocateCommentID).Scan(&c.ID); err != nil {
		return store.Comment{}, errorf(t.d, err, "allocate comment id")
	}
	c.Created, c.Modified = t.meta.Time, t.meta.Time
	c.CreatedTx, c.ModifiedTx = t.meta.ID, t.meta.ID
	c.Deleted = false
	at := t.d.TimeArg(t.meta.Time)
	_, err := t.g.tx.Exec(ctx, t.st.insertComment,
		c.ID, c.Branch, c.ObjectID, c.User, c.Body, at, at, t.meta.ID, t.meta.ID, store.CommentUserKey(c.User))
	if err != nil {
		return store.Comment{}, errorf(t.d, err, "insert comment")
	}
	return c, nil
}

func (t *writeTx) UpdateCommentBody(ctx context.Context, id int64, body string) error {
	if err := t.check(); err != nil {
		return err
	}
	n, err := t.g.tx.Exec(ctx, t.st.updateCommentBody, body, t.d.TimeArg(t.meta.Time), t.meta.ID, id)
	if err != nil {
		return errorf(t.d, err, "update comment %d", id)
	}
	if n == 0 {
		return notFound(t.d, "comment %d", id)
	}
	return nil
}

func (t *writeTx) DeleteComment(ctx context.Context, id int64) (bool, error) {
	if err := t.check(); err != nil {
		return false, err
	}
	var wasDeleted bool
	if err := t.g.tx.QueryRow(ctx, t.st.commentDeleted, id).Scan(&wasDeleted); err != nil {
		return false, errorf(t.d, err, "comment %d", id)
	}
	if wasDeleted {
		return false, nil
	}
	if _, err := t.g.tx.Exec(ctx, t.st.deleteComment, t.d.TimeArg(t.meta.Time), t.meta.ID, id); err != nil {
		return false, errorf(t.d, err, "delete comment %d", id)
	}
	return true, nil
}
