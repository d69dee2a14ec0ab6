// Package postgres is the distributed store.Store on PostgreSQL through
// pgx/v5 (pgxpool).
//
// Write transactions run at READ COMMITTED and start by incrementing the
// 'transaction' counter row; the row lock that UPDATE takes is held until
// commit or rollback, which serialises writers across all processes, makes
// transaction ids gapless and commit order equal to id order. The outbox is
// claimed with FOR UPDATE SKIP LOCKED plus a lease (leased_until, computed
// from the database clock), so several relays can run side by side.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cmsplatform/cms/pkg/migrations"
	"github.com/cmsplatform/cms/pkg/store"
)

// Store is the PostgreSQL implementation of store.Store.
type Store struct {
	reader
	pool   *pgxpool.Pool
	opts   store.Options
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value DSN;
// pool settings such as pool_max_conns go in it) and, unless
// store.WithMigrate(false) is given, applies pending migrations.
func Open(ctx context.Context, url string, opts ...store.Option) (*Store, error) {
	o := store.NewOptions(opts...)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres url: %w", store.ErrInvalidArgument, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if o.Migrate {
		db := stdlib.OpenDBFromPool(pool)
		applied, err := migrations.Apply(ctx, db, migrations.Postgres)
		_ = db.Close() // does not close the pool
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: %w", err)
		}
		for _, m := range applied {
			o.Logger.Info("applied migration", "dialect", "postgres", "version", m.Version, "name", m.Name)
		}
	}
	return &Store{reader: reader{q: pool}, pool: pool, opts: o}, nil
}

// Pool exposes the connection pool, e.g. for health metrics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Begin implements store.Store.
func (s *Store) Begin(ctx context.Context, meta store.TxMeta) (store.Tx, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", mapErr(err))
	}
	t := store.Transaction{
		Time:    store.TxTime(meta, s.opts.Clock),
		User:    meta.User,
		Comment: meta.Comment,
		Branch:  meta.Branch,
	}
	err = tx.QueryRow(ctx,
		`UPDATE counters SET value = value + 1 WHERE name = 'transaction' RETURNING value`).Scan(&t.ID)
	if err == nil {
		_, err = tx.Exec(ctx,
			`INSERT INTO transactions (id, time, user_name, comment, branch) VALUES ($1, $2, $3, $4, $5)`,
			t.ID, t.Time, t.User, t.Comment, t.Branch)
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("postgres: begin: %w", mapErr(err))
	}
	return &writeTx{reader: reader{q: tx}, tx: tx, meta: t, ctx: ctx}, nil
}

// LastTransactionID implements store.Store.
func (s *Store) LastTransactionID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM transactions`).Scan(&id); err != nil {
		return 0, fmt.Errorf("postgres: last transaction: %w", mapErr(err))
	}
	return id, nil
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error {
	if !s.closed.Swap(true) {
		s.pool.Close()
	}
	return nil
}

// ClaimOutbox implements store.OutboxRelay.
func (s *Store) ClaimOutbox(ctx context.Context, limit int) ([]store.OutboxEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		WITH c AS (
			SELECT id FROM outbox
			WHERE leased_until IS NULL OR leased_until <= clock_timestamp()
			ORDER BY id LIMIT $1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE outbox o SET leased_until = clock_timestamp() + $2 * interval '1 microsecond',
			attempts = o.attempts + 1
		FROM c WHERE o.id = c.id
		RETURNING o.id, o.tx_id, o.subject, o.msg_id, o.payload, o.attempts`,
		limit, s.opts.OutboxLease.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: claim outbox: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OutboxEvent, error) {
		var e store.OutboxEvent
		err := r.Scan(&e.ID, &e.TxID, &e.Subject, &e.MsgID, &e.Payload, &e.Attempts)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: claim outbox: %w", mapErr(err))
	}
	sortEvents(out)
	return out, nil
}

// AckOutbox implements store.OutboxRelay.
func (s *Store) AckOutbox(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM outbox WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("postgres: ack outbox: %w", mapErr(err))
	}
	return nil
}

// mapErr turns driver errors into store sentinels where one applies.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("%w: %w", store.ErrTxDone, err)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case "22021", "22P05": // character_not_in_repertoire (a NUL byte in text), untranslatable_character
			return fmt.Errorf("%w: text PostgreSQL cannot store (a NUL character?): %w", store.ErrInvalidArgument, err)
		}
	}
	return err
}
