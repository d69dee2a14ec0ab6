package sqlstore

import (
	"context"
	"math"
	"strings"

	"github.com/cmsplatform/cms/pkg/store"
)

// query is a statement built per call: its text, written with ? for every
// parameter, and its arguments in the same order.
type query struct {
	d        Dialect
	text     strings.Builder
	args     []any
	hasWhere bool
}

// add appends text and the arguments of its ?s.
func (q *query) add(text string, args ...any) {
	q.text.WriteString(text)
	q.args = append(q.args, args...)
}

// where appends a condition: after WHERE for the first, AND for the others.
func (q *query) where(cond string, args ...any) {
	if q.hasWhere {
		q.add(` AND `)
	} else {
		q.add(` WHERE `)
		q.hasWhere = true
	}
	q.add(cond, args...)
}

// whereIn appends the condition "column is one of ids".
func (q *query) whereIn(column string, ids []int64) {
	q.where(q.d.InList(column, "?"), q.d.Int64List(ids))
}

// whereValues appends the conditions of f.
func (q *query) whereValues(f store.ValueFilter) {
	for _, c := range []struct {
		column string
		ids    []int64
	}{{"attribute_id", f.AttributeIDs}, {"language", f.Languages}, {"variant", f.Variants}} {
		if len(c.ids) > 0 {
			q.whereIn(c.column, c.ids)
		}
	}
}

// sql is the text with the dialect's placeholders.
// pageBounds is a paged read's bounds in SQL: before <= 0 (no upper id)
// is the largest id, limit <= 0 (all) the largest LIMIT.
func pageBounds(before int64, limit int) (int64, int) {
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		limit = math.MaxInt32
	}
	return before, limit
}

func (q *query) sql() string { return q.d.Rebind(q.text.String()) }

// collect runs query on q and scans every row with scan; errors say what
// failed ("query objects").
func collect[T any](ctx context.Context, d Dialect, q Querier, what string, scan func(Rows, *T) error,
	query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, errorf(d, err, "%s", what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, errorf(d, err, "%s", what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf(d, err, "%s", what)
	}
	return out, nil
}
