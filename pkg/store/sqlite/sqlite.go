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
//
// The statements, reads and write transactions are sqlstore's; this
// package holds SQLite's dialect (dialect.go), the database/sql adapter,
// the two pools, migrations and the outbox claim.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/cmsplatform/cms/pkg/migrations"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlstore"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// readerConns is the size of the reader pool.
const readerConns = 4

// Store is the SQLite implementation of store.Store: the shared SQL code
// of sqlstore with SQLite's dialect, over a writer and a reader pool.
type Store struct {
	*sqlstore.Store
	writer *sql.DB
	readDB *sql.DB
	// Prepared statements of each pool.
	writeStmts, readStmts *stmtCache
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
	ws, rs := newStmtCache(w), newStmtCache(r)
	return &Store{
		Store: sqlstore.New(sqlstore.Config{
			Dialect: dialect{},
			Read:    querier{q: r, cache: rs},
			Write:   querier{q: w, cache: ws},
			Begin: func(ctx context.Context) (sqlstore.TxConn, error) {
				// database/sql rolls a transaction back when the context
				// it began with ends: the group's must not end with the
				// member that opened it. BEGIN IMMEDIATE (_txlock) waits
				// for another process's writer up to busy_timeout.
				tx, err := w.BeginTx(context.WithoutCancel(ctx), nil)
				if err != nil {
					return nil, err
				}
				return txConn{querier: querier{q: tx, cache: ws, tx: tx}, tx: tx}, nil
			},
			Options: o,
		}),
		writer:     w,
		readDB:     r,
		writeStmts: ws,
		readStmts:  rs,
	}, nil
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
		return fmt.Errorf("sqlite: release outbox leases: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		log.Info("released outbox events claimed by a stopped process", "events", n)
	}
	return nil
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if s.Closed() {
		return store.ErrClosed
	}
	if err := s.readDB.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error {
	if !s.MarkClosed() {
		return nil
	}
	s.readStmts.close()
	s.writeStmts.close()
	return errors.Join(s.readDB.Close(), s.writer.Close())
}

// ClaimOutbox implements store.OutboxRelay. It runs on the writer
// connection, so it waits for an open write transaction to finish; the
// lease is computed from the store's clock.
func (s *Store) ClaimOutbox(ctx context.Context, limit int) ([]store.OutboxEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := s.Options().Clock().UnixMicro()
	return s.ClaimOutboxWith(ctx, `
		UPDATE outbox SET leased_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM outbox WHERE leased_until <= ? ORDER BY id LIMIT ?)
		RETURNING id, tx_id, subject, msg_id, payload, attempts, trace`,
		now+s.Options().OutboxLease.Microseconds(), now, limit)
}
