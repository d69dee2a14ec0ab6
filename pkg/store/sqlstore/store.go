package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/store"
)

// Config is what a backend hands New.
type Config struct {
	// Dialect spells the backend's SQL.
	Dialect Dialect
	// Read runs the reads of committed data.
	Read Querier
	// Write runs the outbox statements outside write transactions.
	Write Querier
	// Begin opens a driver transaction for a group of write transactions
	// (group.go). The backend chooses its isolation and how it waits for
	// the write lock. ctx bounds opening it, not the transaction's life:
	// the group outlives the member whose Begin opened it.
	Begin func(ctx context.Context) (TxConn, error)
	// Options are the store's options (clock, outbox lease …).
	Options store.Options
}

// Store implements store.Store but for Ping, Close and ClaimOutbox, which
// depend on how the backend connects and leases; a backend embeds it and
// adds those (ClaimOutbox through ClaimOutboxWith).
type Store struct {
	reader
	cfg    Config
	w      *writer
	closed atomic.Bool
}

// New returns the shared part of a SQL store for cfg.
func New(cfg Config) *Store {
	st := newStatements(cfg.Dialect)
	return &Store{reader: reader{d: cfg.Dialect, st: st, q: cfg.Read}, cfg: cfg, w: &writer{begin: cfg.Begin}}
}

// Begin implements store.Store: it waits for the writer, joins the open
// transaction group or opens one (group.go), takes the next transaction
// id from the 'transaction' counter row (whose lock serialises writers of
// all processes until the group ends) and writes the transaction record.
func (s *Store) Begin(ctx context.Context, meta store.TxMeta) (store.Tx, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if err := s.w.acquire(ctx); err != nil {
		return nil, errorf(s.d, err, "begin")
	}
	g, first, err := s.w.join(ctx)
	if err != nil {
		s.w.handOver(nil)
		return nil, errorf(s.d, err, "begin")
	}
	t := &writeTx{reader: reader{d: s.d, st: s.st, q: g.tx}, w: s.w, g: g, first: first, ctx: ctx}
	t.meta = store.Transaction{
		Time:    store.TxTime(meta, s.cfg.Options.Clock),
		User:    meta.User,
		Comment: meta.Comment,
		Branch:  meta.Branch,
	}
	if err := s.allocate(ctx, t); err != nil {
		if !first {
			// Whether the savepoint was set is unknown, and rolling
			// back to the previous member's would undo its writes.
			g.fail(err)
		}
		_ = t.Rollback()
		return nil, errorf(s.d, err, "begin")
	}
	return t, nil
}

// allocate takes t's transaction id and writes its record. The group's
// first member reads the id from the counter; a later member's id is
// known (the group holds the counter's lock, and only its members
// advance it), so its savepoint, the counter increment and the record go
// in one batch: one round trip on PostgreSQL.
func (s *Store) allocate(ctx context.Context, t *writeTx) error {
	g, m := t.g, t.meta
	if !t.first {
		t.meta.ID = g.nextID
		return g.tx.ExecBatch(ctx, func(b Batch) {
			b.Queue("SAVEPOINT " + savepoint)
			b.Queue(s.st.countTransaction)
			b.Queue(s.st.insertTransaction, t.meta.ID, s.d.TimeArg(m.Time), m.User, m.Comment, m.Branch)
		})
	}
	var err error
	if s.st.beginAndInsert != "" {
		err = g.tx.QueryRow(ctx, s.st.beginAndInsert, s.d.TimeArg(m.Time), m.User, m.Comment, m.Branch).Scan(&t.meta.ID)
	} else if err = g.tx.QueryRow(ctx, s.st.beginTransaction).Scan(&t.meta.ID); err == nil {
		_, err = g.tx.Exec(ctx, s.st.insertTransaction, t.meta.ID, s.d.TimeArg(m.Time), m.User, m.Comment, m.Branch)
	}
	g.nextID = t.meta.ID
	return err
}

// LastTransactionID implements store.Store.
func (s *Store) LastTransactionID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.q.QueryRow(ctx, s.st.lastTransactionID).Scan(&id); err != nil {
		return 0, errorf(s.d, err, "last transaction")
	}
	return id, nil
}

// LastOutboxTransaction implements store.Store: the highest transaction
// recorded for the subjects with the prefix (one row per subject).
func (s *Store) LastOutboxTransaction(ctx context.Context, subjectPrefix string) (int64, error) {
	var id int64
	pattern := likeEscaper.Replace(subjectPrefix) + "%"
	if err := s.q.QueryRow(ctx, s.st.lastOutboxTx, pattern).Scan(&id); err != nil {
		return 0, errorf(s.d, err, "last outbox transaction")
	}
	return id, nil
}

// likeEscaper quotes LIKE's wildcards (ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ClaimOutboxWith runs a backend's claim statement on the Write querier;
// the statement leases the events and returns their id, tx_id, subject,
// msg_id, payload, attempts and trace. The events come back in id order.
func (s *Store) ClaimOutboxWith(ctx context.Context, query string, args ...any) ([]store.OutboxEvent, error) {
	return s.ClaimOutboxOn(ctx, s.cfg.Write, query, args...)
}

// ClaimOutboxOn is ClaimOutboxWith on the querier q, e.g. the connection
// that holds the backend's relay lock, so that the claim fails when the
// lock's session is gone.
func (s *Store) ClaimOutboxOn(ctx context.Context, q Querier, query string, args ...any) ([]store.OutboxEvent, error) {
	scan := func(rows Rows, e *store.OutboxEvent) error {
		return rows.Scan(&e.ID, &e.TxID, &e.Subject, &e.MsgID, &e.Payload, &e.Attempts, &e.Trace)
	}
	out, err := collect(ctx, s.d, q, "claim outbox", scan, query, args...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b store.OutboxEvent) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// AckOutbox implements store.OutboxRelay on the Write querier.
func (s *Store) AckOutbox(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.cfg.Write.Exec(ctx, s.st.ackOutbox, s.d.Int64List(ids)); err != nil {
		return errorf(s.d, err, "ack outbox")
	}
	return nil
}

// Options are the options the store was opened with.
func (s *Store) Options() store.Options { return s.cfg.Options }

// Closed reports whether MarkClosed was called.
func (s *Store) Closed() bool { return s.closed.Load() }

// MarkClosed makes Begin fail with store.ErrClosed and reports whether the
// store was open until now, so that the backend releases its connections
// once.
func (s *Store) MarkClosed() bool { return !s.closed.Swap(true) }
