package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cmsplatform/cms/pkg/store"
)

// querier is what *pgxpool.Pool and pgx.Tx have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// reader implements store.Reader over the pool or a write transaction.
type reader struct{ q querier }

const objectColumns = `branch, id, type_id, guid, api_identifier, deleted, created_tx, modified_tx`

func sortEvents(ev []store.OutboxEvent) {
	slices.SortFunc(ev, func(a, b store.OutboxEvent) int { return cmp.Compare(a.ID, b.ID) })
}

func (r reader) GetTransaction(ctx context.Context, id int64) (store.Transaction, error) {
	var t store.Transaction
	err := r.q.QueryRow(ctx,
		`SELECT id, time, user_name, comment, branch FROM transactions WHERE id = $1`, id).
		Scan(&t.ID, &t.Time, &t.User, &t.Comment, &t.Branch)
	if err != nil {
		return store.Transaction{}, fmt.Errorf("postgres: transaction %d: %w", id, mapErr(err))
	}
	t.Time = t.Time.UTC()
	return t, nil
}

func (r reader) GetTransactions(ctx context.Context, ids []int64) ([]store.Transaction, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := r.q.Query(ctx,
		`SELECT id, time, user_name, comment, branch FROM transactions WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: transactions: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.Transaction
	for rows.Next() {
		var t store.Transaction
		if err := rows.Scan(&t.ID, &t.Time, &t.User, &t.Comment, &t.Branch); err != nil {
			return nil, fmt.Errorf("postgres: transactions: %w", mapErr(err))
		}
		t.Time = t.Time.UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: transactions: %w", mapErr(err))
	}
	return out, nil
}

func (r reader) GetObject(ctx context.Context, branch, id int64) (store.Object, error) {
	objs, err := r.queryObjects(ctx,
		`SELECT `+objectColumns+` FROM objects WHERE branch = $1 AND id = $2`, branch, id)
	if err != nil {
		return store.Object{}, err
	}
	if len(objs) == 0 {
		return store.Object{}, fmt.Errorf("postgres: object %d on branch %d: %w", id, branch, store.ErrNotFound)
	}
	return objs[0], nil
}

func (r reader) GetObjects(ctx context.Context, branch int64, ids []int64) ([]store.Object, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := r.queryObjects(ctx,
		`SELECT `+objectColumns+` FROM objects WHERE branch = $1 AND id = ANY($2)`, branch, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]store.Object, len(found))
	for _, o := range found {
		byID[o.ID] = o
	}
	out := make([]store.Object, 0, len(found))
	for _, id := range ids {
		if o, ok := byID[id]; ok {
			out = append(out, o)
		}
	}
	return out, nil
}

func (r reader) FindObjects(ctx context.Context, branch int64, guids, apiIdentifiers []string) ([]store.Object, error) {
	if len(guids) == 0 && len(apiIdentifiers) == 0 {
		return nil, nil
	}
	if guids == nil {
		guids = []string{}
	}
	if apiIdentifiers == nil {
		apiIdentifiers = []string{}
	}
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch = $1 AND (guid = ANY($2) OR api_identifier = ANY($3)) ORDER BY id`,
		branch, guids, apiIdentifiers)
}

func (r reader) ListObjects(ctx context.Context, branch int64, q store.ObjectQuery) ([]store.Object, error) {
	var b strings.Builder
	args := []any{branch, q.AfterID}
	b.WriteString(`SELECT ` + objectColumns + ` FROM objects WHERE branch = $1 AND id > $2`)
	if len(q.TypeIDs) > 0 {
		args = append(args, q.TypeIDs)
		b.WriteString(` AND type_id = ANY($` + strconv.Itoa(len(args)) + `)`)
	}
	if q.Deleted != nil {
		args = append(args, *q.Deleted)
		b.WriteString(` AND deleted = $` + strconv.Itoa(len(args)))
	}
	b.WriteString(` ORDER BY id`)
	if q.Limit > 0 {
		args = append(args, q.Limit)
		b.WriteString(` LIMIT $` + strconv.Itoa(len(args)))
	}
	return r.queryObjects(ctx, b.String(), args...)
}

func (r reader) queryObjects(ctx context.Context, query string, args ...any) ([]store.Object, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query objects: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Object, error) {
		var o store.Object
		var api *string
		err := row.Scan(&o.Branch, &o.ID, &o.TypeID, &o.GUID, &api, &o.Deleted, &o.CreatedTx, &o.ModifiedTx)
		if api != nil {
			o.APIIdentifier = *api
		}
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: query objects: %w", mapErr(err))
	}
	return out, nil
}

// valueWhere appends the branch, object and filter conditions shared by
// ListValues and DeleteValues.
func valueWhere(b *strings.Builder, branch int64, objectIDs []int64, f store.ValueFilter) []any {
	b.WriteString(` WHERE branch = $1 AND object_id = ANY($2)`)
	args := []any{branch, objectIDs}
	for _, c := range []struct {
		col string
		ids []int64
	}{{"attribute_id", f.AttributeIDs}, {"language", f.Languages}, {"variant", f.Variants}} {
		if len(c.ids) > 0 {
			args = append(args, c.ids)
			b.WriteString(` AND ` + c.col + ` = ANY($` + strconv.Itoa(len(args)) + `)`)
		}
	}
	return args
}

func (r reader) ListValues(ctx context.Context, branch int64, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(objectIDs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT object_id, branch, attribute_id, language, variant, sort_reverse, value::text, unit_ref, modified_tx FROM object_values`)
	args := valueWhere(&b, branch, objectIDs, f)
	b.WriteString(` ORDER BY object_id, attribute_id, variant, language, sort_reverse`)
	return r.queryValues(ctx, b.String(), args...)
}

func (r reader) queryValues(ctx context.Context, query string, args ...any) ([]store.Value, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list values: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Value, error) {
		var v store.Value
		var j string
		err := row.Scan(&v.ObjectID, &v.Branch, &v.AttributeID, &v.Language, &v.Variant, &v.SortReverse, &j, &v.UnitRef, &v.ModifiedTx)
		v.JSON = []byte(j)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list values: %w", mapErr(err))
	}
	return out, nil
}
