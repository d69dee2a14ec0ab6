// Package sqlite is the embedded store.Store: one SQLite file through the
// pure-Go driver modernc.org/sqlite (driver name "sqlite").
//
// The file is opened twice: a writer pool with exactly one connection, so
// write transactions of this process queue in database/sql instead of
// failing with SQLITE_BUSY, and a small reader pool that, thanks to WAL
// mode, reads committed data without waiting for the writer. Write
// transactions start with BEGIN IMMEDIATE and busy_timeout covers other
// processes using the same file. In-memory databases are not supported (the
// two pools would see two different databases).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/migrations"
	"github.com/cmsplatform/cms/pkg/store"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// readerConns is the size of the reader pool.
const readerConns = 4

// Store is the SQLite implementation of store.Store.
type Store struct {
	writer *sql.DB
	reader
	readDB *sql.DB
	opts   store.Options
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// dsn builds the modernc DSN for path with the pragmas every connection needs.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path and, unless
// store.WithMigrate(false) is given, applies pending migrations.
func Open(ctx context.Context, path string, opts ...store.Option) (*Store, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("%w: sqlite needs a file path", store.ErrInvalidArgument)
	}
	o := store.NewOptions(opts...)
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if o.Migrate {
		applied, err := migrations.Apply(ctx, w, migrations.SQLite)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		for _, m := range applied {
			o.Logger.Info("applied migration", "dialect", "sqlite", "version", m.Version, "name", m.Name)
		}
	}
	if err := releaseOutboxLeases(ctx, w, o.Logger); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readerConns)
	r.SetMaxIdleConns(readerConns)
	return &Store{writer: w, readDB: r, reader: reader{q: r}, opts: o}, nil
}

// releaseOutboxLeases makes every outbox event claimable again. A SQLite
// file serves one process (`cms run`: its data dir is locked by the
// embedded NATS and Bleve), so a lease found at open was taken by a relay
// that is gone: killed between claiming and acking. Left alone it would
// hide those events for the rest of the lease (30s) while the new relay
// publishes newer ones first, out of commit order, so the indexer's
// change-tracking version would pass transactions it has not applied and
// read-your-writes would answer without them. Released, they are claimed
// first again; the stream drops a re-published duplicate by MsgID.
func releaseOutboxLeases(ctx context.Context, w *sql.DB, log *slog.Logger) error {
	res, err := w.ExecContext(ctx, `UPDATE outbox SET leased_until = 0 WHERE leased_until > 0`)
	if err != nil {
		return fmt.Errorf("sqlite: release outbox leases: %w", mapErr(err))
	}
	if n, _ := res.RowsAffected(); n > 0 {
		log.Info("released outbox events claimed by a stopped process", "events", n)
	}
	return nil
}

// Begin implements store.Store.
func (s *Store) Begin(ctx context.Context, meta store.TxMeta) (store.Tx, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", mapErr(err))
	}
	t := store.Transaction{
		Time:    store.TxTime(meta, s.opts.Clock),
		User:    meta.User,
		Comment: meta.Comment,
		Branch:  meta.Branch,
	}
	err = tx.QueryRowContext(ctx,
		`UPDATE counters SET value = value + 1 WHERE name = 'transaction' RETURNING value`).Scan(&t.ID)
	if err == nil {
		_, err = tx.ExecContext(ctx,
			`INSERT INTO transactions (id, time_us, user_name, comment, branch) VALUES (?, ?, ?, ?, ?)`,
			t.ID, t.Time.UnixMicro(), t.User, t.Comment, t.Branch)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("sqlite: begin: %w", mapErr(err))
	}
	return &writeTx{tx: tx, meta: t, reader: reader{q: tx}, s: s}, nil
}

// LastTransactionID implements store.Store.
func (s *Store) LastTransactionID(ctx context.Context) (int64, error) {
	var id int64
	err := s.readDB.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM transactions`).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("sqlite: last transaction: %w", mapErr(err))
	}
	return id, nil
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := s.readDB.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(s.readDB.Close(), s.writer.Close())
}

// ClaimOutbox implements store.OutboxRelay. It runs on the writer
// connection, so it waits for an open write transaction to finish.
func (s *Store) ClaimOutbox(ctx context.Context, limit int) ([]store.OutboxEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := s.opts.Clock().UnixMicro()
	rows, err := s.writer.QueryContext(ctx, `
		UPDATE outbox SET leased_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM outbox WHERE leased_until <= ? ORDER BY id LIMIT ?)
		RETURNING id, tx_id, subject, msg_id, payload, attempts`,
		now+s.opts.OutboxLease.Microseconds(), now, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim outbox: %w", mapErr(err))
	}
	defer rows.Close()
	var out []store.OutboxEvent
	for rows.Next() {
		var e store.OutboxEvent
		if err := rows.Scan(&e.ID, &e.TxID, &e.Subject, &e.MsgID, &e.Payload, &e.Attempts); err != nil {
			return nil, fmt.Errorf("sqlite: claim outbox: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim outbox: %w", mapErr(err))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// AckOutbox implements store.OutboxRelay.
func (s *Store) AckOutbox(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.writer.ExecContext(ctx,
		`DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return fmt.Errorf("sqlite: ack outbox: %w", mapErr(err))
	}
	return nil
}

// mapErr turns driver errors into store sentinels where one applies.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("%w: %w", store.ErrTxDone, err)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		}
	}
	return err
}
