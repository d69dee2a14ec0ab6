// Package sqlstore is the part of the SQL implementations of store.Store
// that does not depend on the database: the statements, the reads, the
// write transaction and the outbox acks. A backend (pkg/store/postgres,
// pkg/store/sqlite) supplies a Dialect for what its SQL spells differently,
// a Querier over its driver, and its own connection handling, migrations,
// Ping, Close and outbox claim.
//
// Statements are written with ? for every parameter; Dialect.Rebind turns
// them into the backend's placeholders. Static statements are rendered once
// per store (see statements), so the hot write path builds no SQL text.
package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// Dialect is what the SQL of one database spells differently. The shared
// code writes ? for parameters and never a list condition, a JSON or time
// conversion or a lock clause itself; it asks the Dialect.
type Dialect interface {
	// Name prefixes error messages ("postgres", "sqlite").
	Name() string

	// Rebind replaces each ? of query, in order, by the dialect's
	// placeholder ($1, $2 … or ?). Queries must not contain ? otherwise.
	Rebind(query string) string

	// InList is the condition "column is one of the list bound at
	// placeholder", for a list argument made by Int64List or StringList.
	InList(column, placeholder string) string
	// Int64List is the argument that binds ids to one InList placeholder.
	Int64List(ids []int64) any
	// StringList is the argument that binds ss to one InList placeholder.
	StringList(ss []string) any

	// JSONParam is the expression that stores the JSON text bound at
	// placeholder into a JSON column.
	JSONParam(placeholder string) string
	// JSONText is the expression that reads a JSON column as text,
	// unchanged.
	JSONText(column string) string

	// TimeColumn is the column that stores the time called name in the
	// schema (the dialect may keep it under another name, e.g. with a unit).
	TimeColumn(name string) string
	// TimeArg is the argument that stores t in a TimeColumn.
	TimeArg(t time.Time) any
	// TimeDest is the scan destination that reads a TimeColumn into t.
	TimeDest(t *time.Time) any

	// Greatest is the expression for the larger of two numbers.
	Greatest(a, b string) string
	// IndexedBy is appended to "FROM table" to make the query use the
	// named index ("" where the planner needs no hint). SQLite without
	// statistics plans "branch = ? AND type_id = ? ORDER BY id" over the
	// primary key (every object of the branch) instead of objects_type.
	IndexedBy(index string) string

	// LockForUpdate is appended to a SELECT that reads a row the
	// transaction is about to change ("" where the write transaction
	// already holds a lock that covers it).
	LockForUpdate() string

	// ModifyingCTE reports whether a WITH clause may hold an UPDATE …
	// RETURNING whose rows the statement's INSERT uses (PostgreSQL), so
	// that taking a transaction id and writing its record is one
	// statement (one round trip while holding the writer lock).
	ModifyingCTE() bool

	// ClassifyError says which of the store's error kinds a driver error
	// is, ErrOther for none.
	ClassifyError(err error) ErrorClass
}

// ErrorClass is a kind of driver error that the store reports with a
// sentinel of its own.
type ErrorClass int

const (
	// ErrOther is any error without a store sentinel.
	ErrOther ErrorClass = iota
	// ErrTxFinished means the driver's transaction was already committed or
	// rolled back (store.ErrTxDone).
	ErrTxFinished
	// ErrNoRows means a single-row query found no row (store.ErrNotFound).
	ErrNoRows
	// ErrUniqueViolation means a unique constraint or primary key was violated
	// (store.ErrConflict).
	ErrUniqueViolation
	// ErrUnstorableText means the database cannot store a text it was
	// given, e.g. PostgreSQL and a NUL character (store.ErrInvalidArgument).
	ErrUnstorableText
)

// Querier runs statements on a connection pool or in a transaction.
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement that returns at most one row; its error,
	// if any, is reported by Scan.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// ExecBatch runs the statements that queue adds to the batch, in
	// order, and returns the first error (the statements after it are not
	// run). A driver may run each as it is added or send them all in one
	// round trip when queue returns.
	ExecBatch(ctx context.Context, queue func(Batch)) error
}

// Batch collects the statements of Querier.ExecBatch.
type Batch interface {
	Queue(query string, args ...any)
}

// Rows is the result of Querier.Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of Querier.QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// TxConn is a driver's write transaction.
type TxConn interface {
	Querier
	Commit(ctx context.Context) error
	// Rollback discards the transaction; ctx is not cancelled when the
	// caller's context was.
	Rollback(ctx context.Context) error
}

// mapErr turns driver errors into store sentinels where one applies.
func mapErr(d Dialect, err error) error {
	if err == nil {
		return nil
	}
	switch d.ClassifyError(err) {
	case ErrTxFinished:
		return fmt.Errorf("%w: %w", store.ErrTxDone, err)
	case ErrNoRows:
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	case ErrUniqueViolation:
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	case ErrUnstorableText:
		return fmt.Errorf("%w: a text the database cannot store (a NUL character?): %w", store.ErrInvalidArgument, err)
	}
	return err
}

// errorf formats a store error: the dialect's name, then format, with err
// mapped to a store sentinel where one applies.
func errorf(d Dialect, err error, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", d.Name(), fmt.Sprintf(format, args...), mapErr(d, err))
}

// notFound is the dialect's ErrNotFound for what.
func notFound(d Dialect, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", d.Name(), fmt.Sprintf(format, args...), store.ErrNotFound)
}
