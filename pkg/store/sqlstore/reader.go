package sqlstore

import (
	"context"
	"database/sql"
	"math"

	"github.com/cmsplatform/cms/pkg/store"
)

// reader implements store.Reader over a connection pool or a write
// transaction.
type reader struct {
	d  Dialect
	st *statements
	q  Querier
}

func (r reader) newQuery() *query { return &query{d: r.d} }

func (r reader) GetTransaction(ctx context.Context, id int64) (store.Transaction, error) {
	var t store.Transaction
	err := r.q.QueryRow(ctx, r.st.getTransaction, id).
		Scan(&t.ID, r.d.TimeDest(&t.Time), &t.User, &t.Comment, &t.Branch)
	if err != nil {
		return store.Transaction{}, errorf(r.d, err, "transaction %d", id)
	}
	t.Time = t.Time.UTC()
	return t, nil
}

func (r reader) GetTransactions(ctx context.Context, ids []int64) ([]store.Transaction, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, r.st.getTransactions, r.d.Int64List(ids))
	if err != nil {
		return nil, errorf(r.d, err, "transactions")
	}
	defer rows.Close()
	var out []store.Transaction
	for rows.Next() {
		var t store.Transaction
		if err := rows.Scan(&t.ID, r.d.TimeDest(&t.Time), &t.User, &t.Comment, &t.Branch); err != nil {
			return nil, errorf(r.d, err, "transactions")
		}
		t.Time = t.Time.UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf(r.d, err, "transactions")
	}
	return out, nil
}

func (r reader) GetObject(ctx context.Context, branch, id int64) (store.Object, error) {
	objs, err := r.queryObjects(ctx, r.st.getObject, branch, id)
	if err != nil {
		return store.Object{}, err
	}
	if len(objs) == 0 {
		return store.Object{}, notFound(r.d, "object %d on branch %d", id, branch)
	}
	return objs[0], nil
}

func (r reader) GetObjects(ctx context.Context, branch int64, ids []int64) ([]store.Object, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := r.queryObjects(ctx, r.st.getObjects, branch, r.d.Int64List(ids))
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
	return r.queryObjects(ctx, r.st.findObjects, branch, r.d.StringList(guids), r.d.StringList(apiIdentifiers))
}

func (r reader) ListObjects(ctx context.Context, branch int64, q store.ObjectQuery) ([]store.Object, error) {
	b := r.newQuery()
	b.add(r.st.selectObjects)
	if len(q.TypeIDs) == 1 {
		// The objects of one type, in id order, from objects_type
		// (branch, type_id, id): e.g. the branch list every view reads.
		b.add(r.d.IndexedBy("objects_type"))
		b.where(`branch = ? AND type_id = ? AND id > ?`, branch, q.TypeIDs[0], q.AfterID)
	} else {
		b.where(`branch = ? AND id > ?`, branch, q.AfterID)
		if len(q.TypeIDs) > 0 {
			b.whereIn("type_id", q.TypeIDs)
		}
	}
	if q.Deleted != nil {
		b.where(`deleted = ?`, *q.Deleted)
	}
	b.add(` ORDER BY id`)
	if q.Limit > 0 {
		b.add(` LIMIT ?`, q.Limit)
	}
	return r.queryObjects(ctx, b.sql(), b.args...)
}

func (r reader) queryObjects(ctx context.Context, query string, args ...any) ([]store.Object, error) {
	return collect(ctx, r.d, r.q, "query objects", scanObject, query, args...)
}

func scanObject(rows Rows, o *store.Object) error {
	var api sql.NullString
	err := rows.Scan(&o.Branch, &o.ID, &o.TypeID, &o.GUID, &api, &o.Deleted, &o.CreatedTx, &o.ModifiedTx)
	o.APIIdentifier = api.String
	return err
}

func (r reader) ListValues(ctx context.Context, branch int64, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(objectIDs) == 0 {
		return nil, nil
	}
	b := r.newQuery()
	b.add(r.st.selectValues)
	b.where(`branch = ?`, branch)
	b.whereIn("object_id", objectIDs)
	b.whereValues(f)
	b.add(` ORDER BY ` + valueOrder)
	return r.queryValues(ctx, b.sql(), b.args...)
}

func (r reader) queryValues(ctx context.Context, query string, args ...any) ([]store.Value, error) {
	return collect(ctx, r.d, r.q, "list values", scanValue, query, args...)
}

func scanValue(rows Rows, v *store.Value) error {
	var j string
	var unit sql.NullInt64
	err := rows.Scan(&v.ObjectID, &v.Branch, &v.AttributeID, &v.Language, &v.Variant, &v.SortReverse, &j, &unit, &v.ModifiedTx)
	v.JSON = []byte(j)
	if unit.Valid {
		v.UnitRef = &unit.Int64
	}
	return err
}

// ListBranchObjectIDs is one statement: the ids of the branch's object
// rows and (UNION) of its values, each read from its primary key
// (branch first).
func (r reader) ListBranchObjectIDs(ctx context.Context, branch, afterID int64, limit int) ([]int64, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	b := r.newQuery()
	b.add(`SELECT id FROM (SELECT id FROM objects WHERE branch = ? AND id > ?`, branch, afterID)
	b.add(` UNION SELECT DISTINCT object_id AS id FROM object_values WHERE branch = ? AND object_id > ?) AS own`, branch, afterID)
	b.add(` ORDER BY id LIMIT ?`, limit)
	return collect(ctx, r.d, r.q, "list the branch's objects", func(rows Rows, id *int64) error { return rows.Scan(id) }, b.sql(), b.args...)
}
