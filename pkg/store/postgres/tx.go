package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cmsplatform/cms/pkg/store"
)

// writeTx implements store.Tx on one pgx transaction.
type writeTx struct {
	reader
	tx   pgx.Tx
	meta store.Transaction
	ctx  context.Context // Begin's context, for Rollback
	done bool
}

func (t *writeTx) ID() int64               { return t.meta.ID }
func (t *writeTx) Meta() store.Transaction { return t.meta }

func (t *writeTx) check() error {
	if t.done {
		return store.ErrTxDone
	}
	return nil
}

// execBatch sends b in one round trip and returns the first error.
func (t *writeTx) execBatch(ctx context.Context, b *pgx.Batch) error {
	br := t.tx.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return mapErr(err)
		}
	}
	return mapErr(br.Close())
}

func (t *writeTx) NewObjectIDs(ctx context.Context, n int) ([]int64, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: cannot allocate %d ids", store.ErrInvalidArgument, n)
	}
	if n == 0 {
		return nil, nil
	}
	var last int64
	err := t.tx.QueryRow(ctx,
		`UPDATE counters SET value = value + $1 WHERE name = 'object' RETURNING value`, n).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("postgres: allocate object ids: %w", mapErr(err))
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n) + 1 + int64(i)
	}
	return ids, nil
}

func (t *writeTx) PutObjects(ctx context.Context, objs ...store.Object) error {
	if err := t.check(); err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	if err := store.CheckObjects(objs); err != nil {
		return err
	}
	b := &pgx.Batch{}
	for _, o := range objs {
		var api *string
		if o.APIIdentifier != "" {
			api = &o.APIIdentifier
		}
		b.Queue(`INSERT INTO objects (`+objectColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
			ON CONFLICT (branch, id) DO UPDATE SET type_id = excluded.type_id, guid = excluded.guid,
				api_identifier = excluded.api_identifier, deleted = excluded.deleted,
				modified_tx = excluded.modified_tx`,
			o.Branch, o.ID, o.TypeID, o.GUID, api, o.Deleted, t.meta.ID)
	}
	b.Queue(`UPDATE counters SET value = GREATEST(value, $1) WHERE name = 'object'`, store.MaxID(objs))
	if err := t.execBatch(ctx, b); err != nil {
		return fmt.Errorf("postgres: put objects: %w", err)
	}
	return nil
}

func (t *writeTx) DeleteObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE objects SET deleted = TRUE, modified_tx = $1
		WHERE branch = $2 AND NOT deleted AND id = ANY($3)`, t.meta.ID, branch, ids)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete objects: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

func (t *writeTx) PutValues(ctx context.Context, values ...store.Value) error {
	if err := t.check(); err != nil {
		return err
	}
	js, err := store.NormalizeValues(values)
	if err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for i, v := range values {
		b.Queue(`INSERT INTO object_values
			(branch, object_id, attribute_id, variant, language, sort_reverse, value, unit_ref, modified_tx)
			VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, $9)
			ON CONFLICT (branch, object_id, attribute_id, variant, language, sort_reverse)
			DO UPDATE SET value = excluded.value, unit_ref = excluded.unit_ref, modified_tx = excluded.modified_tx`,
			v.Branch, v.ObjectID, v.AttributeID, v.Variant, v.Language, v.SortReverse, string(js[i]), v.UnitRef, t.meta.ID)
	}
	if err := t.execBatch(ctx, b); err != nil {
		return fmt.Errorf("postgres: put values: %w", err)
	}
	return nil
}

func (t *writeTx) DeleteValues(ctx context.Context, branch int64, objectIDs []int64, f store.ValueFilter) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(objectIDs) == 0 {
		return 0, nil
	}
	var b strings.Builder
	b.WriteString(`DELETE FROM object_values`)
	args := valueWhere(&b, branch, objectIDs, f)
	tag, err := t.tx.Exec(ctx, b.String(), args...)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete values: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

func (t *writeTx) AppendOutbox(ctx context.Context, events ...store.OutboxEvent) error {
	if err := t.check(); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, e := range events {
		if e.Subject == "" {
			return fmt.Errorf("%w: outbox event without subject", store.ErrInvalidArgument)
		}
		payload := e.Payload
		if payload == nil {
			payload = []byte{}
		}
		b.Queue(`INSERT INTO outbox (tx_id, subject, msg_id, payload) VALUES ($1, $2, $3, $4)`,
			t.meta.ID, e.Subject, e.MsgID, payload)
	}
	if err := t.execBatch(ctx, b); err != nil {
		return fmt.Errorf("postgres: append outbox: %w", err)
	}
	return nil
}

func (t *writeTx) Commit(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	t.done = true
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit %d: %w", t.meta.ID, mapErr(err))
	}
	return nil
}

func (t *writeTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	if err := t.tx.Rollback(context.WithoutCancel(t.ctx)); err != nil {
		return fmt.Errorf("postgres: rollback %d: %w", t.meta.ID, mapErr(err))
	}
	return nil
}

func (t *writeTx) PurgeObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM object_values WHERE branch = $1 AND object_id = ANY($2)`, branch, ids); err != nil {
		return 0, fmt.Errorf("postgres: purge values: %w", mapErr(err))
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM objects WHERE branch = $1 AND id = ANY($2)`, branch, ids)
	if err != nil {
		return 0, fmt.Errorf("postgres: purge objects: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}

func (t *writeTx) PurgeBranch(ctx context.Context, branch int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM object_values WHERE branch = $1`, branch); err != nil {
		return 0, fmt.Errorf("postgres: purge branch values: %w", mapErr(err))
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM comments WHERE branch = $1`, branch); err != nil {
		return 0, fmt.Errorf("postgres: purge branch comments: %w", mapErr(err))
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM objects WHERE branch = $1`, branch)
	if err != nil {
		return 0, fmt.Errorf("postgres: purge branch objects: %w", mapErr(err))
	}
	return int(tag.RowsAffected()), nil
}
