package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cmsplatform/cms/pkg/store/sqlstore"
)

// dialect is PostgreSQL's sqlstore.Dialect: numbered placeholders, lists
// bound as arrays (= ANY), json and timestamptz columns, row locks.
type dialect struct{}

var _ sqlstore.Dialect = dialect{}

func (dialect) Name() string { return "postgres" }

// Rebind numbers the ?s: $1, $2 ….
func (dialect) Rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

func (dialect) InList(column, placeholder string) string {
	return column + ` = ANY(` + placeholder + `)`
}

func (dialect) Int64List(ids []int64) any { return ids }

// StringList binds nil as an empty array, not as NULL.
func (dialect) StringList(ss []string) any {
	if ss == nil {
		return []string{}
	}
	return ss
}

func (dialect) JSONParam(placeholder string) string { return placeholder + `::text::json` }
func (dialect) JSONText(column string) string       { return column + `::text` }

func (dialect) TimeColumn(name string) string { return name }
func (dialect) TimeArg(t time.Time) any       { return t }
func (dialect) TimeDest(t *time.Time) any     { return t }

func (dialect) Greatest(a, b string) string { return `GREATEST(` + a + `, ` + b + `)` }

// IndexedBy: PostgreSQL's planner has statistics and takes no hints.
func (dialect) IndexedBy(string) string { return `` }

// LockForUpdate: writers run at READ COMMITTED, so a row read before it
// is changed is locked.
func (dialect) LockForUpdate() string { return ` FOR UPDATE` }

func (dialect) ModifyingCTE() bool { return true }

func (dialect) ClassifyError(err error) sqlstore.ErrorClass {
	if errors.Is(err, pgx.ErrTxClosed) {
		return sqlstore.ErrTxFinished
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return sqlstore.ErrUniqueViolation
		case "22021", "22P05": // character_not_in_repertoire (a NUL in text), untranslatable_character
			return sqlstore.ErrUnstorableText
		}
	}
	return sqlstore.ErrOther
}

// pgxQuerier is what *pgxpool.Pool and pgx.Tx have in common.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// querier is sqlstore.Querier over the pool or a transaction.
type querier struct{ q pgxQuerier }

func (c querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (c querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (c querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return c.q.QueryRow(ctx, query, args...)
}

// ExecBatch sends the statements in one round trip.
func (c querier) ExecBatch(ctx context.Context, queue func(sqlstore.Batch)) error {
	b := &pgx.Batch{}
	queue(batch{b})
	return execAll(c.q.SendBatch(ctx, b), b.Len())
}

// batch is sqlstore.Batch on a pgx.Batch.
type batch struct{ b *pgx.Batch }

func (b batch) Queue(query string, args ...any) { b.b.Queue(query, args...) }
