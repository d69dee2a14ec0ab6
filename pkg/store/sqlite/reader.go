package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// reader implements store.Reader over the reader pool or a write transaction.
type reader struct{ q querier }

const objectColumns = `branch, id, type_id, guid, api_identifier, deleted, created_tx, modified_tx`

// idList encodes ids as a JSON array for json_each(?): one bound parameter
// whatever the number of ids, so a batch is always one statement.
func idList(ids []int64) string {
	var b strings.Builder
	b.Grow(len(ids)*8 + 2)
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// stringList encodes ss as a JSON array for json_each(?).
func stringList(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ss) // cannot fail for []string
	return string(b)
}

func (r reader) GetTransaction(ctx context.Context, id int64) (store.Transaction, error) {
	var t store.Transaction
	var us int64
	err := r.q.QueryRowContext(ctx,
		`SELECT id, time_us, user_name, comment, branch FROM transactions WHERE id = ?`, id).
		Scan(&t.ID, &us, &t.User, &t.Comment, &t.Branch)
	if err != nil {
		return store.Transaction{}, fmt.Errorf("sqlite: transaction %d: %w", id, mapErr(err))
	}
	t.Time = time.UnixMicro(us).UTC()
	return t, nil
}

func (r reader) GetTransactions(ctx context.Context, ids []int64) ([]store.Transaction, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := r.q.QueryContext(ctx, `SELECT id, time_us, user_name, comment, branch FROM transactions
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: transactions: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.Transaction
	for rows.Next() {
		var t store.Transaction
		var us int64
		if err := rows.Scan(&t.ID, &us, &t.User, &t.Comment, &t.Branch); err != nil {
			return nil, fmt.Errorf("sqlite: transactions: %w", mapErr(err))
		}
		t.Time = time.UnixMicro(us).UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: transactions: %w", mapErr(err))
	}
	return out, nil
}

func (r reader) GetObject(ctx context.Context, branch, id int64) (store.Object, error) {
	objs, err := r.queryObjects(ctx,
		`SELECT `+objectColumns+` FROM objects WHERE branch = ? AND id = ?`, branch, id)
	if err != nil {
		return store.Object{}, err
	}
	if len(objs) == 0 {
		return store.Object{}, fmt.Errorf("sqlite: object %d on branch %d: %w", id, branch, store.ErrNotFound)
	}
	return objs[0], nil
}

func (r reader) GetObjects(ctx context.Context, branch int64, ids []int64) ([]store.Object, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch = ? AND id IN (SELECT value FROM json_each(?))`, branch, idList(ids))
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
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects WHERE branch = ? AND (
		guid IN (SELECT value FROM json_each(?)) OR api_identifier IN (SELECT value FROM json_each(?)))
		ORDER BY id`, branch, stringList(guids), stringList(apiIdentifiers))
}

func (r reader) ListObjects(ctx context.Context, branch int64, q store.ObjectQuery) ([]store.Object, error) {
	var b strings.Builder
	args := []any{branch, q.AfterID}
	b.WriteString(`SELECT ` + objectColumns + ` FROM objects WHERE branch = ? AND id > ?`)
	if len(q.TypeIDs) > 0 {
		b.WriteString(` AND type_id IN (SELECT value FROM json_each(?))`)
		args = append(args, idList(q.TypeIDs))
	}
	if q.Deleted != nil {
		b.WriteString(` AND deleted = ?`)
		args = append(args, *q.Deleted)
	}
	b.WriteString(` ORDER BY id`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ?`)
		args = append(args, q.Limit)
	}
	return r.queryObjects(ctx, b.String(), args...)
}

func (r reader) queryObjects(ctx context.Context, query string, args ...any) ([]store.Object, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query objects: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.Object
	for rows.Next() {
		var o store.Object
		var api sql.NullString
		if err := rows.Scan(&o.Branch, &o.ID, &o.TypeID, &o.GUID, &api, &o.Deleted, &o.CreatedTx, &o.ModifiedTx); err != nil {
			return nil, fmt.Errorf("sqlite: scan object: %w", err)
		}
		o.APIIdentifier = api.String
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: query objects: %w", mapErr(err))
	}
	return out, nil
}

// valueWhere appends the branch, object and filter conditions shared by
// ListValues and DeleteValues.
func valueWhere(b *strings.Builder, branch int64, objectIDs []int64, f store.ValueFilter) []any {
	b.WriteString(` WHERE branch = ? AND object_id IN (SELECT value FROM json_each(?))`)
	args := []any{branch, idList(objectIDs)}
	for _, c := range []struct {
		col string
		ids []int64
	}{{"attribute_id", f.AttributeIDs}, {"language", f.Languages}, {"variant", f.Variants}} {
		if len(c.ids) > 0 {
			b.WriteString(` AND ` + c.col + ` IN (SELECT value FROM json_each(?))`)
			args = append(args, idList(c.ids))
		}
	}
	return args
}

func (r reader) ListValues(ctx context.Context, branch int64, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(objectIDs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT object_id, branch, attribute_id, language, variant, sort_reverse, value, unit_ref, modified_tx FROM object_values`)
	args := valueWhere(&b, branch, objectIDs, f)
	b.WriteString(` ORDER BY object_id, attribute_id, variant, language, sort_reverse`)
	return r.queryValues(ctx, b.String(), args...)
}

func (r reader) queryValues(ctx context.Context, query string, args ...any) ([]store.Value, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list values: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.Value
	for rows.Next() {
		var v store.Value
		var j string
		var unit sql.NullInt64
		if err := rows.Scan(&v.ObjectID, &v.Branch, &v.AttributeID, &v.Language, &v.Variant, &v.SortReverse, &j, &unit, &v.ModifiedTx); err != nil {
			return nil, fmt.Errorf("sqlite: scan value: %w", err)
		}
		v.JSON = []byte(j)
		if unit.Valid {
			v.UnitRef = &unit.Int64
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list values: %w", mapErr(err))
	}
	return out, nil
}
