// Package postgres is the distributed store.Store on PostgreSQL through
// pgx/v5 (pgxpool).
//
// Write transactions run at READ COMMITTED and start by incrementing the
// 'transaction' counter row; the row lock that UPDATE takes is held until
// commit or rollback, which serialises writers across all processes, makes
// transaction ids gapless and commit order equal to id order. The outbox is
// claimed with a lease (leased_until, computed from the database clock) by
// one relay at a time, the holder of an advisory lock (relaylock.go), so the
// stream gets the events in commit order with any number of replicas and
// after a replica is killed.
//
// The statements, reads and write transactions are sqlstore's; this
// package holds PostgreSQL's dialect (dialect.go), the pgx adapter, the
// connection, migrations and the outbox claim.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cmsplatform/cms/pkg/migrations"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlstore"
)

// Store is the PostgreSQL implementation of store.Store: the shared SQL
// code of sqlstore with PostgreSQL's dialect, over a pgx pool.
type Store struct {
	*sqlstore.Store
	pool *pgxpool.Pool
	// relayLock lets one replica at a time claim the outbox.
	relayLock *relayLock
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value DSN;
// pool settings such as pool_max_conns go in it) and, unless
// store.WithMigrate(false) is given, applies pending migrations. Other
// parameters of the URL are server settings for the store's sessions;
// random_page_cost defaults to DefaultRandomPageCost.
func Open(ctx context.Context, url string, opts ...store.Option) (*Store, error) {
	o := store.NewOptions(opts...)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres url: %w", store.ErrInvalidArgument, err)
	}
	plannerCosts(cfg.ConnConfig.RuntimeParams)
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
	onPool := querier{q: pool}
	return &Store{
		Store: sqlstore.New(sqlstore.Config{
			Dialect: dialect{},
			Read:    onPool,
			Write:   onPool,
			Begin: func(ctx context.Context) (sqlstore.TxConn, error) {
				// ctx bounds taking the connection only; the BEGIN goes
				// with the transaction's first statement (txConn).
				conn, err := pool.Acquire(ctx)
				if err != nil {
					return nil, err
				}
				return &txConn{conn: conn}, nil
			},
			Options: o,
		}),
		pool:      pool,
		relayLock: &relayLock{pool: pool, log: o.Logger},
	}, nil
}

// DefaultRandomPageCost is the random_page_cost the store's connections
// ask for unless the URL names one (an empty value keeps the server's).
// PostgreSQL's default of 4 models disks that seek; with it the planner
// answers "id = ANY(1,000 ids)" (a page of an export, the values of a
// page, the GUIDs of an import batch) by scanning every row of the table
// rather than 1,000 index probes, 10 times slower at 100,000 objects and
// growing with them. 1.1 is what PostgreSQL's documentation suggests for
// data on SSDs or in memory.
const DefaultRandomPageCost = "1.1"

// plannerCosts sets random_page_cost in the startup parameters params
// (from the URL's query) to DefaultRandomPageCost unless given; an empty
// value removes it.
func plannerCosts(params map[string]string) {
	v, ok := params["random_page_cost"]
	switch {
	case !ok:
		params["random_page_cost"] = DefaultRandomPageCost
	case v == "":
		delete(params, "random_page_cost")
	}
}

// Pool exposes the connection pool, e.g. for health metrics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	if s.Closed() {
		return store.ErrClosed
	}
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error {
	if !s.MarkClosed() {
		return nil
	}
	err := s.relayLock.close()
	s.pool.Close()
	return err
}

// ClaimOutbox implements store.OutboxRelay. Only the store that holds the
// relay lock claims (see relayLock); the others get no events until the
// holder's session ends. The lease is computed from the database clock.
func (s *Store) ClaimOutbox(ctx context.Context, limit int) ([]store.OutboxEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	return s.relayLock.claim(ctx, func(conn *pgx.Conn) ([]store.OutboxEvent, bool, error) {
		// The claim and the lock check in one round trip.
		b := &pgx.Batch{}
		b.Queue(claimStatement, limit, s.Options().OutboxLease.Microseconds())
		b.Queue(`SELECT ` + holdsRelayLock)
		br := conn.SendBatch(ctx, b)
		evs, err := s.ClaimOutboxOn(ctx, batchQuerier{br}, "")
		var held bool
		if err == nil {
			err = br.QueryRow().Scan(&held)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, false, err
		}
		return evs, held, nil
	})
}

// claimStatement leases up to $1 events for $2 microseconds, oldest first,
// on the session that holds the relay lock.
var claimStatement = `
	WITH c AS (
		SELECT id FROM outbox
		WHERE (leased_until IS NULL OR leased_until <= clock_timestamp())
			AND ` + holdsRelayLock + `
		ORDER BY id LIMIT $1
		FOR UPDATE SKIP LOCKED
	)
	UPDATE outbox o SET leased_until = clock_timestamp() + $2 * interval '1 microsecond',
		attempts = o.attempts + 1
	FROM c WHERE o.id = c.id
	RETURNING o.id, o.tx_id, o.subject, o.msg_id, o.payload, o.attempts, o.trace`

// batchQuerier is a sqlstore.Querier whose Query reads the next result
// of a sent batch (the query text and arguments were queued with it).
type batchQuerier struct{ br pgx.BatchResults }

func (q batchQuerier) Query(context.Context, string, ...any) (sqlstore.Rows, error) {
	rows, err := q.br.Query()
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (q batchQuerier) Exec(context.Context, string, ...any) (int64, error) {
	tag, err := q.br.Exec()
	return tag.RowsAffected(), err
}

func (q batchQuerier) QueryRow(context.Context, string, ...any) sqlstore.Row { return q.br.QueryRow() }

func (q batchQuerier) ExecBatch(context.Context, func(sqlstore.Batch)) error {
	return errors.New("postgres: no batch inside a batch")
}
