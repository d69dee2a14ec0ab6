package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cmsplatform/cms/pkg/store"
)

// relayLockKey is the key of the session-level advisory lock held by the
// one relay that claims the outbox (advisory locks are per database). Both
// 32-bit halves are below 2^31, so pg_locks shows them as the same numbers
// in classid and objid.
const relayLockKey int64 = 0x636d7300_72656c61 // "cms\0rela"

const (
	relayLockClassID = relayLockKey >> 32
	relayLockObjID   = relayLockKey & 0xffffffff
)

// holdsRelayLock is true when the session running it holds the relay lock.
// The claim statement repeats it so that a claim can never run without the
// lock, e.g. behind a pooler that hands out another server session.
var holdsRelayLock = fmt.Sprintf(`EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
	AND pid = pg_backend_pid() AND granted AND classid = %d AND objid = %d AND objsubid = 1)`,
	relayLockClassID, relayLockObjID)

// relayLock makes the outbox relays of all replicas publish one at a time,
// which keeps the stream in commit order: relays claiming side by side
// would publish their batches concurrently, and a relay killed between
// claiming and acking would leave its rows leased while the next relay
// published newer ones first.
//
// The lock is a session-level advisory lock on a dedicated connection (taken
// out of the pool). PostgreSQL releases it when that session ends, so when a
// pod is killed the standby relays take over at their next claim. A relay
// that takes the lock releases every lease first: no other relay claims
// while it holds the lock, so a leased row belongs to a dead relay or to one
// that lost the lock, and the oldest unpublished rows are published first
// again (JetStream drops a re-published MsgID within its duplicate window).
// Claims run on the lock's session, so a claim fails when the session is
// gone, and the claim statement checks the lock too. Session-level locks
// need session-level connections: behind a transaction-pooling proxy
// (PgBouncer pool_mode=transaction) the check fails and nothing is claimed.
type relayLock struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu sync.Mutex
	// conn is the lock's session: nil until the first claim and after it
	// broke. A standby keeps it to retry the lock on each claim.
	conn *pgx.Conn
	// held is whether conn holds the lock.
	held   bool
	closed bool
}

// claim runs fn on the lock's session when this store holds the lock,
// taking the lock first if it is free. A store that does not get the lock
// is a standby: claim returns no events and no error.
//
// fn claims and reports whether the session still holds the lock (the
// claim statement finds nothing without it, so an empty outbox and a lost
// lock look alike); fn asks both in one round trip.
func (l *relayLock) claim(ctx context.Context, fn func(conn *pgx.Conn) ([]store.OutboxEvent, bool, error)) ([]store.OutboxEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, store.ErrClosed
	}
	if err := l.acquire(ctx); err != nil || !l.held {
		return nil, err
	}
	evs, held, err := fn(l.conn)
	if err != nil {
		if l.conn.IsClosed() {
			l.drop("the claim failed on the lock's connection")
		}
		return nil, err
	}
	if !held {
		// Tell an empty outbox from a lost lock, so that a lost lock is
		// taken again.
		l.drop("the session no longer holds the lock")
	}
	return evs, nil
}

// acquire takes the lock unless it is held, opening the lock's session if
// needed; on taking it, it releases every outbox lease.
func (l *relayLock) acquire(ctx context.Context) error {
	if l.conn != nil && l.conn.IsClosed() {
		l.drop("the lock's connection is closed")
	}
	if l.held {
		return nil
	}
	if l.conn == nil {
		c, err := l.pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("postgres: outbox relay lock: connect: %w", err)
		}
		l.conn = c.Hijack()
	}
	var got bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, relayLockKey).Scan(&got); err != nil {
		l.drop("taking the lock failed")
		return fmt.Errorf("postgres: outbox relay lock: %w", err)
	}
	if !got {
		return nil // another replica publishes; stand by
	}
	tag, err := l.conn.Exec(ctx, `UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL`)
	if err != nil {
		// Ending the session releases the lock: the next claim starts over.
		l.drop("releasing the leases failed")
		return fmt.Errorf("postgres: outbox relay lock: release leases: %w", err)
	}
	l.held = true
	l.log.Info("outbox relay lock taken: this process publishes the outbox",
		"released_leases", tag.RowsAffected())
	return nil
}

// drop forgets the lock and closes its session (which releases the lock
// if the server still holds it for us).
func (l *relayLock) drop(why string) {
	if l.held {
		l.log.Warn("outbox relay lock lost: standing by", "reason", why)
	}
	l.held = false
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = l.conn.Close(ctx)
		cancel()
		l.conn = nil
	}
}

// close ends the lock's session; later claims fail with store.ErrClosed.
func (l *relayLock) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := l.conn.Close(ctx)
	l.conn, l.held = nil, false
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres: close the outbox relay lock: %w", err)
	}
	return nil
}
