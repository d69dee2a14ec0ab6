package sqlstore

import "context"

// BatchCommitter is a TxConn that can send statements and its COMMIT in
// one round trip (PostgreSQL's pipeline). Without it, the statements run
// as an ExecBatch before Commit.
type BatchCommitter interface {
	// CommitBatch runs the statements queue adds, then commits; when one
	// fails, nothing after it runs and the transaction is rolled back.
	CommitBatch(ctx context.Context, queue func(Batch)) error
}

// queued is a statement waiting in a deferredTx.
type queued struct {
	query string
	args  []any
}

// deferredTx is a group's driver transaction with writes held back: the
// rows of PutValues and AppendOutbox, which the database refuses only in
// ways the store checks before (invalid JSON, an event without subject),
// wait for the transaction's next statement and go in its round trip when
// it is an ExecBatch or the COMMIT (CommitBatch), before it otherwise. A
// write transaction that puts values and appends its event then commits
// in one round trip. Should a held-back statement fail after all, the
// statement it went with fails with its error.
type deferredTx struct {
	TxConn
	held []queued
}

func (d *deferredTx) Queue(query string, args ...any) {
	d.held = append(d.held, queued{query: query, args: args})
}

// later holds back the statements queue adds.
func (d *deferredTx) later(queue func(Batch)) { queue(d) }

// discard drops the held-back statements (their member rolls back).
func (d *deferredTx) discard() { d.held = nil }

// take returns the held-back statements as a queue function and forgets
// them.
func (d *deferredTx) take() func(Batch) {
	held := d.held
	d.held = nil
	return func(b Batch) {
		for _, q := range held {
			b.Queue(q.query, q.args...)
		}
	}
}

// flush runs the held-back statements.
func (d *deferredTx) flush(ctx context.Context) error {
	if len(d.held) == 0 {
		return nil
	}
	return d.TxConn.ExecBatch(ctx, d.take())
}

func (d *deferredTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := d.flush(ctx); err != nil {
		return 0, err
	}
	return d.TxConn.Exec(ctx, query, args...)
}

func (d *deferredTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if err := d.flush(ctx); err != nil {
		return nil, err
	}
	return d.TxConn.Query(ctx, query, args...)
}

func (d *deferredTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	if err := d.flush(ctx); err != nil {
		return errRow{err}
	}
	return d.TxConn.QueryRow(ctx, query, args...)
}

// ExecBatch runs the held-back statements first, in the same batch.
func (d *deferredTx) ExecBatch(ctx context.Context, queue func(Batch)) error {
	if len(d.held) == 0 {
		return d.TxConn.ExecBatch(ctx, queue)
	}
	held := d.take()
	return d.TxConn.ExecBatch(ctx, func(b Batch) {
		held(b)
		queue(b)
	})
}

// Commit runs the held-back statements and commits, in one round trip
// where the driver can.
func (d *deferredTx) Commit(ctx context.Context) error {
	if bc, ok := d.TxConn.(BatchCommitter); ok {
		return bc.CommitBatch(ctx, d.take())
	}
	if err := d.flush(ctx); err != nil {
		_ = d.TxConn.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return d.TxConn.Commit(ctx)
}

// Rollback drops the held-back statements and rolls back.
func (d *deferredTx) Rollback(ctx context.Context) error {
	d.discard()
	return d.TxConn.Rollback(ctx)
}

// errRow is a Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
