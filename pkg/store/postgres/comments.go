package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cmsplatform/cms/pkg/store"
)

const commentColumns = `id, branch, object_id, user_name, body, deleted, created, modified, created_tx, modified_tx`

func (r reader) GetComment(ctx context.Context, id int64) (store.Comment, error) {
	cs, err := r.queryComments(ctx, `SELECT `+commentColumns+` FROM comments WHERE id = $1`, id)
	if err != nil {
		return store.Comment{}, err
	}
	if len(cs) == 0 {
		return store.Comment{}, fmt.Errorf("postgres: comment %d: %w", id, store.ErrNotFound)
	}
	return cs[0], nil
}

func (r reader) ListComments(ctx context.Context, q store.CommentQuery) ([]store.Comment, error) {
	var b strings.Builder
	var args []any
	b.WriteString(`SELECT ` + commentColumns + ` FROM comments WHERE TRUE`)
	cond := func(sql string, v any) {
		args = append(args, v)
		b.WriteString(` AND ` + sql + ` $` + strconv.Itoa(len(args)))
	}
	if q.Branch != nil {
		cond(`branch =`, *q.Branch)
	}
	if q.ObjectID != nil {
		cond(`object_id =`, *q.ObjectID)
	}
	if q.User != "" {
		cond(`user_key =`, store.CommentUserKey(q.User))
	}
	if q.Deleted != nil {
		cond(`deleted =`, *q.Deleted)
	}
	if q.BeforeID > 0 {
		cond(`id <`, q.BeforeID)
	}
	b.WriteString(` ORDER BY id DESC`)
	if q.Limit > 0 {
		args = append(args, q.Limit)
		b.WriteString(` LIMIT $` + strconv.Itoa(len(args)))
	}
	return r.queryComments(ctx, b.String(), args...)
}

func (r reader) queryComments(ctx context.Context, query string, args ...any) ([]store.Comment, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query comments: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Comment, error) {
		var c store.Comment
		err := row.Scan(&c.ID, &c.Branch, &c.ObjectID, &c.User, &c.Body, &c.Deleted,
			&c.Created, &c.Modified, &c.CreatedTx, &c.ModifiedTx)
		c.Created, c.Modified = c.Created.UTC(), c.Modified.UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: query comments: %w", mapErr(err))
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
	err := t.tx.QueryRow(ctx,
		`UPDATE counters SET value = value + 1 WHERE name = 'comment' RETURNING value`).Scan(&c.ID)
	if err != nil {
		return store.Comment{}, fmt.Errorf("postgres: allocate comment id: %w", mapErr(err))
	}
	c.Created, c.Modified = t.meta.Time, t.meta.Time
	c.CreatedTx, c.ModifiedTx = t.meta.ID, t.meta.ID
	c.Deleted = false
	_, err = t.tx.Exec(ctx, `INSERT INTO comments (`+commentColumns+`, user_key)
		VALUES ($1, $2, $3, $4, $5, FALSE, $6, $6, $7, $7, $8)`,
		c.ID, c.Branch, c.ObjectID, c.User, c.Body, t.meta.Time, t.meta.ID, store.CommentUserKey(c.User))
	if err != nil {
		return store.Comment{}, fmt.Errorf("postgres: insert comment: %w", mapErr(err))
	}
	return c, nil
}

func (t *writeTx) UpdateCommentBody(ctx context.Context, id int64, body string) error {
	if err := t.check(); err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE comments SET body = $1, modified = $2, modified_tx = $3 WHERE id = $4`,
		body, t.meta.Time, t.meta.ID, id)
	if err != nil {
		return fmt.Errorf("postgres: update comment %d: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: comment %d: %w", id, store.ErrNotFound)
	}
	return nil
}

func (t *writeTx) DeleteComment(ctx context.Context, id int64) (bool, error) {
	if err := t.check(); err != nil {
		return false, err
	}
	var wasDeleted bool
	err := t.tx.QueryRow(ctx, `SELECT deleted FROM comments WHERE id = $1 FOR UPDATE`, id).Scan(&wasDeleted)
	if err != nil {
		return false, fmt.Errorf("postgres: comment %d: %w", id, mapErr(err))
	}
	if wasDeleted {
		return false, nil
	}
	_, err = t.tx.Exec(ctx, `UPDATE comments SET deleted = TRUE, modified = $1, modified_tx = $2 WHERE id = $3`,
		t.meta.Time, t.meta.ID, id)
	if err != nil {
		return false, fmt.Errorf("postgres: delete comment %d: %w", id, mapErr(err))
	}
	return true, nil
}
