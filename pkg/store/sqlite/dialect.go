package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/cmsplatform/cms/pkg/store/sqlstore"
)

// dialect is SQLite's sqlstore.Dialect: ? placeholders, lists bound as one
// JSON array each (json_each), JSON as text, times as unix microseconds in
// columns named *_us.
type dialect struct{}

var _ sqlstore.Dialect = dialect{}

func (dialect) Name() string { return "sqlite" }

func (dialect) Rebind(query string) string { return query }

func (dialect) InList(column, placeholder string) string {
	return column + ` IN (SELECT value FROM json_each(` + placeholder + `))`
}

// Int64List encodes ids as a JSON array for json_each(?): one bound
// parameter whatever the number of ids, so a batch is always one statement.
func (dialect) Int64List(ids []int64) any {
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

// StringList encodes ss as a JSON array for json_each(?).
func (dialect) StringList(ss []string) any {
	if len(ss) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ss) // cannot fail for []string
	return string(b)
}

func (dialect) JSONParam(placeholder string) string { return placeholder }
func (dialect) JSONText(column string) string       { return column }

func (dialect) TimeColumn(name string) string { return name + "_us" }
func (dialect) TimeArg(t time.Time) any       { return t.UnixMicro() }
func (dialect) TimeDest(t *time.Time) any     { return unixMicroDest{t} }

func (dialect) Greatest(a, b string) string { return `MAX(` + a + `, ` + b + `)` }

// IndexedBy names the index: without ANALYZE statistics SQLite prefers
// the primary key whenever it yields the ORDER BY, however many rows the
// key's range holds.
func (dialect) IndexedBy(index string) string { return ` INDEXED BY ` + index }

// LockForUpdate: a write transaction holds the database's write lock from
// BEGIN IMMEDIATE on, so rows need no lock of their own.
func (dialect) LockForUpdate() string { return `` }

func (dialect) ModifyingCTE() bool { return false }

func (dialect) ClassifyError(err error) sqlstore.ErrorClass {
	if errors.Is(err, sql.ErrTxDone) {
		return sqlstore.ErrTxFinished
	}
	if errors.Is(err, sql.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return sqlstore.ErrUniqueViolation
		}
	}
	return sqlstore.ErrOther
}

// unixMicroDest scans unix microseconds into a time.Time.
type unixMicroDest struct{ t *time.Time }

func (d unixMicroDest) Scan(src any) error {
	us, ok := src.(int64)
	if !ok {
		return fmt.Errorf("time in unix microseconds: got %T", src)
	}
	*d.t = time.UnixMicro(us).UTC()
	return nil
}

// sqlQuerier is what *sql.DB and *sql.Tx have in common.
type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier is sqlstore.Querier over a database/sql pool or transaction,
// running the statements prepared by cache where it can: on the pool
// itself, or in tx when tx is set (then q is tx).
type querier struct {
	q     sqlQuerier
	cache *stmtCache
	tx    *sql.Tx
}

// stmt returns the prepared statement to run query with, nil to run it
// unprepared on q.
func (c querier) stmt(ctx context.Context, query string) *sql.Stmt {
	switch {
	case c.cache == nil:
		return nil
	case c.tx == nil:
		return c.cache.get(ctx, query)
	}
	if st := c.cache.getInTx(query); st != nil {
		return c.tx.StmtContext(ctx, st)
	}
	return nil
}

// detach returns the context to run a statement of a write transaction
// with: ctx without its cancellation, but with its deadline. SQLite
// interrupts a statement whose context ends, and an interrupted write
// rolls back the whole database transaction, which a transaction group
// shares with other callers (sqlstore's group commit): a caller that went
// away must not take their writes with it. Pool statements keep ctx.
func (c querier) detach(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.tx == nil {
		return ctx, func() {}
	}
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(context.WithoutCancel(ctx), d)
	}
	return context.WithoutCancel(ctx), func() {}
}

func (c querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ctx, cancel := c.detach(ctx)
	defer cancel()
	var res sql.Result
	var err error
	if st := c.stmt(ctx, query); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = c.q.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	ctx, cancel := c.detach(ctx)
	var rows *sql.Rows
	var err error
	if st := c.stmt(ctx, query); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = c.q.QueryContext(ctx, query, args...)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return rowsCloser{rows, cancel}, nil
}

func (c querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	ctx, cancel := c.detach(ctx)
	if st := c.stmt(ctx, query); st != nil {
		return rowCanceller{st.QueryRowContext(ctx, args...), cancel}
	}
	return rowCanceller{c.q.QueryRowContext(ctx, query, args...), cancel}
}

// rowCanceller is *sql.Row that ends its statement's context after Scan.
type rowCanceller struct {
	*sql.Row
	cancel context.CancelFunc
}

func (r rowCanceller) Scan(dest ...any) error {
	defer r.cancel()
	return r.Row.Scan(dest...)
}

// ExecBatch runs each statement as it is queued: SQLite is in process, so
// a round trip costs nothing.
func (c querier) ExecBatch(ctx context.Context, queue func(sqlstore.Batch)) error {
	b := &execNow{ctx: ctx, q: c}
	queue(b)
	return b.err
}

// execNow is a sqlstore.Batch that executes each statement at once, until
// one fails.
type execNow struct {
	ctx context.Context
	q   querier
	err error
}

func (b *execNow) Queue(query string, args ...any) {
	if b.err == nil {
		_, b.err = b.q.Exec(b.ctx, query, args...)
	}
}

// rowsCloser is *sql.Rows with the Close of sqlstore.Rows (its error is
// reported by Err), which also ends the statement's context.
type rowsCloser struct {
	*sql.Rows
	cancel context.CancelFunc
}

func (r rowsCloser) Close() {
	_ = r.Rows.Close()
	r.cancel()
}

// txConn is sqlstore.TxConn over a database/sql transaction. database/sql
// ties the transaction to Begin's context, so Commit and Rollback take none.
type txConn struct {
	querier
	tx *sql.Tx
}

func (t txConn) Commit(context.Context) error   { return t.tx.Commit() }
func (t txConn) Rollback(context.Context) error { return t.tx.Rollback() }
