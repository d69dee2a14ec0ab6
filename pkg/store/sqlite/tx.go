package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/store"
)

// writeTx implements store.Tx on the single writer connection.
type writeTx struct {
	reader
	tx interface {
		Commit() error
		Rollback() error
	}
	meta store.Transaction
	s    *Store
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
	err := t.q.QueryRowContext(ctx,
		`UPDATE counters SET value = value + ? WHERE name = 'object' RETURNING value`, n).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("sqlite: allocate object ids: %w", mapErr(err))
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
	for _, o := range objs {
		var api any
		if o.APIIdentifier != "" {
			api = o.APIIdentifier
		}
		_, err := t.q.ExecContext(ctx, `INSERT INTO objects (`+objectColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (branch, id) DO UPDATE SET type_id = excluded.type_id, guid = excluded.guid,
				api_identifier = excluded.api_identifier, deleted = excluded.deleted,
				modified_tx = excluded.modified_tx`,
			o.Branch, o.ID, o.TypeID, o.GUID, api, o.Deleted, t.meta.ID, t.meta.ID)
		if err != nil {
			return fmt.Errorf("sqlite: put object %d on branch %d: %w", o.ID, o.Branch, mapErr(err))
		}
	}
	_, err := t.q.ExecContext(ctx,
		`UPDATE counters SET value = MAX(value, ?) WHERE name = 'object'`, store.MaxID(objs))
	if err != nil {
		return fmt.Errorf("sqlite: bump object id counter: %w", mapErr(err))
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
	res, err := t.q.ExecContext(ctx, `UPDATE objects SET deleted = 1, modified_tx = ?
		WHERE branch = ? AND deleted = 0 AND id IN (SELECT value FROM json_each(?))`,
		t.meta.ID, branch, idList(ids))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete objects: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (t *writeTx) PutValues(ctx context.Context, values ...store.Value) error {
	if err := t.check(); err != nil {
		return err
	}
	js, err := store.NormalizeValues(values)
	if err != nil {
		return err
	}
	for i, v := range values {
		_, err := t.q.ExecContext(ctx, `INSERT INTO object_values
			(branch, object_id, attribute_id, variant, language, sort_reverse, value, unit_ref, modified_tx)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (branch, object_id, attribute_id, variant, language, sort_reverse)
			DO UPDATE SET value = excluded.value, unit_ref = excluded.unit_ref, modified_tx = excluded.modified_tx`,
			v.Branch, v.ObjectID, v.AttributeID, v.Variant, v.Language, v.SortReverse, string(js[i]), v.UnitRef, t.meta.ID)
		if err != nil {
			return fmt.Errorf("sqlite: put value of object %d: %w", v.ObjectID, mapErr(err))
		}
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
	res, err := t.q.ExecContext(ctx, b.String(), args...)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete values: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (t *writeTx) AppendOutbox(ctx context.Context, events ...store.OutboxEvent) error {
	if err := t.check(); err != nil {
		return err
	}
	for _, e := range events {
		if e.Subject == "" {
			return fmt.Errorf("%w: outbox event without subject", store.ErrInvalidArgument)
		}
	}
	for _, e := range events {
		payload := e.Payload
		if payload == nil {
			payload = []byte{}
		}
		_, err := t.q.ExecContext(ctx,
			`INSERT INTO outbox (tx_id, subject, msg_id, payload) VALUES (?, ?, ?, ?)`,
			t.meta.ID, e.Subject, e.MsgID, payload)
		if err != nil {
			return fmt.Errorf("sqlite: append outbox: %w", mapErr(err))
		}
	}
	return nil
}

func (t *writeTx) Commit(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	t.done = true
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit %d: %w", t.meta.ID, mapErr(err))
	}
	return nil
}

func (t *writeTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	if err := t.tx.Rollback(); err != nil {
		return fmt.Errorf("sqlite: rollback %d: %w", t.meta.ID, mapErr(err))
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
	list := idList(ids)
	if _, err := t.q.ExecContext(ctx, `DELETE FROM object_values
		WHERE branch = ? AND object_id IN (SELECT value FROM json_each(?))`, branch, list); err != nil {
		return 0, fmt.Errorf("sqlite: purge values: %w", mapErr(err))
	}
	res, err := t.q.ExecContext(ctx, `DELETE FROM objects
		WHERE branch = ? AND id IN (SELECT value FROM json_each(?))`, branch, list)
	if err != nil {
		return 0, fmt.Errorf("sqlite: purge objects: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (t *writeTx) PurgeBranch(ctx context.Context, branch int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if _, err := t.q.ExecContext(ctx, `DELETE FROM object_values WHERE branch = ?`, branch); err != nil {
		return 0, fmt.Errorf("sqlite: purge branch values: %w", mapErr(err))
	}
	if _, err := t.q.ExecContext(ctx, `DELETE FROM comments WHERE branch = ?`, branch); err != nil {
		return 0, fmt.Errorf("sqlite: purge branch comments: %w", mapErr(err))
	}
	res, err := t.q.ExecContext(ctx, `DELETE FROM objects WHERE branch = ?`, branch)
	if err != nil {
		return 0, fmt.Errorf("sqlite: purge branch objects: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}
