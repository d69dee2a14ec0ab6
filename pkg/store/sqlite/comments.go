package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

const commentColumns = `id, branch, object_id, user_name, body, deleted, created_us, modified_us, created_tx, modified_tx`

func (r reader) GetComment(ctx context.Context, id int64) (store.Comment, error) {
	cs, err := r.queryComments(ctx, `SELECT `+commentColumns+` FROM comments WHERE id = ?`, id)
	if err != nil {
		return store.Comment{}, err
	}
	if len(cs) == 0 {
		return store.Comment{}, fmt.Errorf("sqlite: comment %d: %w", id, store.ErrNotFound)
	}
	return cs[0], nil
}

func (r reader) ListComments(ctx context.Context, q store.CommentQuery) ([]store.Comment, error) {
	var b strings.Builder
	var args []any
	b.WriteString(`SELECT ` + commentColumns + ` FROM comments WHERE 1 = 1`)
	if q.Branch != nil {
		b.WriteString(` AND branch = ?`)
		args = append(args, *q.Branch)
	}
	if q.ObjectID != nil {
		b.WriteString(` AND object_id = ?`)
		args = append(args, *q.ObjectID)
	}
	if q.User != "" {
		b.WriteString(` AND user_key = ?`)
		args = append(args, store.CommentUserKey(q.User))
	}
	if q.Deleted != nil {
		b.WriteString(` AND deleted = ?`)
		args = append(args, *q.Deleted)
	}
	if q.BeforeID > 0 {
		b.WriteString(` AND id < ?`)
		args = append(args, q.BeforeID)
	}
	b.WriteString(` ORDER BY id DESC`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ?`)
		args = append(args, q.Limit)
	}
	return r.queryComments(ctx, b.String(), args...)
}

func (r reader) queryComments(ctx context.Context, query string, args ...any) ([]store.Comment, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query comments: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.Comment
	for rows.Next() {
		var c store.Comment
		var created, modified int64
		if err := rows.Scan(&c.ID, &c.Branch, &c.ObjectID, &c.User, &c.Body, &c.Deleted,
			&created, &modified, &c.CreatedTx, &c.ModifiedTx); err != nil {
			return nil, fmt.Errorf("sqlite: scan comment: %w", err)
		}
		c.Created = time.UnixMicro(created).UTC()
		c.Modified = time.UnixMicro(modified).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: query comments: %w", mapErr(err))
	}
	return out, nil
}

func (t *writeTx) InsertComment(ctx context.Context, c store.Comment) (store.Comment, error) {
	if err := t.check(); err != nil {
		return store.Comment{}, err
	}
	if err := store.CheckComment(c); err != nil {
		return store.Comment{}, err
	}
	err := t.q.QueryRowContext(ctx,
		`UPDATE counters SET value = value + 1 WHERE name = 'comment' RETURNING value`).Scan(&c.ID)
	if err != nil {
		return store.Comment{}, fmt.Errorf("sqlite: allocate comment id: %w", mapErr(err))
	}
	c.Created, c.Modified = t.meta.Time, t.meta.Time
	c.CreatedTx, c.ModifiedTx = t.meta.ID, t.meta.ID
	c.Deleted = false
	us := t.meta.Time.UnixMicro()
	_, err = t.q.ExecContext(ctx, `INSERT INTO comments (`+commentColumns+`, user_key)
		VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
		c.ID, c.Branch, c.ObjectID, c.User, c.Body, us, us, t.meta.ID, t.meta.ID, store.CommentUserKey(c.User))
	if err != nil {
		return store.Comment{}, fmt.Errorf("sqlite: insert comment: %w", mapErr(err))
	}
	return c, nil
}

func (t *writeTx) UpdateCommentBody(ctx context.Context, id int64, body string) error {
	if err := t.check(); err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, `UPDATE comments SET body = ?, modified_us = ?, modified_tx = ? WHERE id = ?`,
		body, t.meta.Time.UnixMicro(), t.meta.ID, id)
	if err != nil {
		return fmt.Errorf("sqlite: update comment %d: %w", id, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: update comment %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: comment %d: %w", id, store.ErrNotFound)
	}
	return nil
}

func (t *writeTx) DeleteComment(ctx context.Context, id int64) (bool, error) {
	if err := t.check(); err != nil {
		return false, err
	}
	var wasDeleted bool
	err := t.q.QueryRowContext(ctx, `SELECT deleted FROM comments WHERE id = ?`, id).Scan(&wasDeleted)
	if err != nil {
		return false, fmt.Errorf("sqlite: comment %d: %w", id, mapErr(err))
	}
	if wasDeleted {
		return false, nil
	}
	_, err = t.q.ExecContext(ctx, `UPDATE comments SET deleted = 1, modified_us = ?, modified_tx = ? WHERE id = ?`,
		t.meta.Time.UnixMicro(), t.meta.ID, id)
	if err != nil {
		return false, fmt.Errorf("sqlite: delete comment %d: %w", id, mapErr(err))
	}
	return true, nil
}
