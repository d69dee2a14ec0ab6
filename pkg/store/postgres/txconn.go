package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cmsplatform/cms/pkg/store/sqlstore"
)

// beginStatement opens a write transaction (the text pgx sends for
// pgx.TxOptions{IsoLevel: pgx.ReadCommitted}).
const beginStatement = "begin isolation level read committed"

// txConn is sqlstore.TxConn on a connection taken from the pool. Its
// BEGIN is not a round trip of its own: it goes in front of the first
// statement, in the same pipeline, and CommitBatch sends the last writes
// and the COMMIT together. The connection returns to the pool after the
// COMMIT or ROLLBACK; pgxpool closes it instead should the transaction
// still be open then (a failed COMMIT or ROLLBACK).
type txConn struct {
	conn  *pgxpool.Conn
	begun bool // BEGIN was sent
	done  bool // COMMIT or ROLLBACK was sent; conn is released
}

var _ sqlstore.BatchCommitter = (*txConn)(nil)

func (t *txConn) check() error {
	if t.done {
		return pgx.ErrTxClosed
	}
	return nil
}

// batch returns a pgx.Batch that opens the transaction first if it is
// not open yet.
func (t *txConn) batch() *pgx.Batch {
	b := &pgx.Batch{}
	if !t.begun {
		t.begun = true
		b.Queue(beginStatement)
	}
	return b
}

func (t *txConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if t.begun {
		tag, err := t.conn.Exec(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		return tag.RowsAffected(), nil
	}
	b := t.batch()
	b.Queue(query, args...)
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *txConn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.begun {
		rows, err := t.conn.Query(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		return rows, nil
	}
	b := t.batch()
	b.Queue(query, args...)
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return batchRows{Rows: rows, br: br}, nil
}

func (t *txConn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	if err := t.check(); err != nil {
		return errRow{err}
	}
	if t.begun {
		return t.conn.QueryRow(ctx, query, args...)
	}
	b := t.batch()
	b.Queue(query, args...)
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// ExecBatch sends the statements in one round trip (after the BEGIN, if
// it is still to be sent).
func (t *txConn) ExecBatch(ctx context.Context, queue func(sqlstore.Batch)) error {
	if err := t.check(); err != nil {
		return err
	}
	b := t.batch()
	queue(batch{b})
	return execAll(t.conn.SendBatch(ctx, b), b.Len())
}

// CommitBatch sends the statements queue adds, then the COMMIT, in one
// round trip. When a statement fails, the COMMIT is not run and the
// transaction is rolled back.
func (t *txConn) CommitBatch(ctx context.Context, queue func(sqlstore.Batch)) error {
	if err := t.check(); err != nil {
		return err
	}
	last := &pgx.Batch{}
	queue(batch{last})
	if !t.begun && last.Len() == 0 {
		// Nothing was sent: there is nothing to commit either.
		t.release()
		return nil
	}
	b := t.batch()
	b.QueuedQueries = append(b.QueuedQueries, last.QueuedQueries...)
	b.Queue("commit")
	br := t.conn.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	var err error
	for range b.Len() {
		if tag, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() == "ROLLBACK" {
		// COMMIT of a transaction an earlier error had aborted.
		err = pgx.ErrTxCommitRollback
	}
	if err != nil {
		// The commit's error is the answer; a rollback that fails too
		// still releases the connection, which the pool then closes
		// (its transaction is not idle).
		_ = t.rollback(context.WithoutCancel(ctx))
		return err
	}
	t.release()
	return nil
}

func (t *txConn) Commit(ctx context.Context) error {
	return t.CommitBatch(ctx, func(sqlstore.Batch) {})
}

func (t *txConn) Rollback(ctx context.Context) error {
	if t.done {
		return nil
	}
	if !t.begun {
		t.release()
		return nil
	}
	return t.rollback(ctx)
}

// rollback ends the transaction and releases the connection.
func (t *txConn) rollback(ctx context.Context) error {
	_, err := t.conn.Exec(ctx, "rollback")
	t.release()
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// release hands the connection back to the pool (which closes it when
// its transaction is still open).
func (t *txConn) release() {
	t.done = true
	t.conn.Release()
}

// execAll reads the n results of a batch and closes it; the first error
// is returned (the statements after it were not run).
func execAll(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	return br.Close()
}

// batchRows are the rows of a batch's last statement; closing them closes
// the batch.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

// batchRow is the row of a batch's last statement; Scan closes the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil && cerr != nil && !errors.Is(cerr, pgx.ErrNoRows) {
		err = cerr
	}
	return err
}

// errRow is a Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
