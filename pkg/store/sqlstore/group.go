package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Group commit.
//
// Write transactions are serialised (the transaction counter's lock), so
// their throughput is bounded by how long each holds the writer, and the
// commit (a WAL flush, and on PostgreSQL a round trip) is a large part of
// that for a small transaction. The writer therefore runs the write
// transactions of this process that queue behind each other in one
// database transaction, a group: the first opens it, each later one runs
// inside a savepoint of it (so its rollback undoes only its own writes),
// and when no writer is waiting any more, or the group is full, the last
// one commits the group once. Every member's Commit returns after that
// commit, with its error: a caller is acknowledged only once its writes
// are durable, exactly as durable as a commit of its own (the
// database's synchronous setting is untouched). Transaction ids stay
// gapless and in commit order: members take them in turn under the
// writer, and a rolled-back member's id goes to the next one.
//
// A member that fails in a way its savepoint cannot undo (the connection
// is gone, the database rolled the whole transaction back) fails the
// group: every member of it gets the error and nothing of it is
// committed, as when each had lost its own transaction.

const (
	// maxGroupSize bounds the members of one group. Each later member is
	// a savepoint, which PostgreSQL keeps as a subtransaction until the
	// group ends; beyond 64 per transaction, snapshots get slower.
	maxGroupSize = 32
	// maxGroupAge stops further members from joining a group opened this
	// long ago, so the first member's acknowledgement is not postponed for
	// long under a steady stream of writers.
	maxGroupAge = 20 * time.Millisecond
	// savepoint is the name of a member's savepoint. Members run one
	// after the other and a savepoint is never released: a name names the
	// newest savepoint of that name, so ROLLBACK TO reaches the current
	// member's, and the commit of the group keeps what the others did.
	savepoint = "cms_member"
)

// writer hands the write connection to one member at a time and keeps
// the open group.
type writer struct {
	begin func(ctx context.Context) (TxConn, error)

	mu      sync.Mutex
	busy    bool            // a member owns the writer
	waiters []chan struct{} // Begins waiting for the writer, oldest first
	cur     *group          // the open group, nil between groups
}

// group is one database transaction shared by members.
type group struct {
	tx      *deferredTx
	opened  time.Time
	members int // committed members waiting for the group's commit
	// nextID is the transaction id of the member running now: the
	// counter's value once its increment is done. A commit advances it, a
	// rollback gives it to the next member.
	nextID int64
	// failed is set when a member could not be undone by its savepoint:
	// the group is rolled back and every member gets this error.
	failed error
	// last is the transaction id of the newest committed member, whose
	// held-back rows (deferredTx) the group's end sends; lastErr is set
	// when the database refused them and that member alone was undone.
	last    int64
	lastErr error
	done    chan struct{} // closed when the group has ended; err is its outcome
	err     error
}

// acquire waits (up to ctx) until the caller owns the writer.
func (w *writer) acquire(ctx context.Context) error {
	w.mu.Lock()
	if !w.busy {
		w.busy = true
		w.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	w.waiters = append(w.waiters, ch)
	w.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	w.mu.Lock()
	for i, c := range w.waiters {
		if c == ch {
			w.waiters = append(w.waiters[:i], w.waiters[i+1:]...)
			w.mu.Unlock()
			return ctx.Err()
		}
	}
	w.mu.Unlock()
	w.abandon()
	return ctx.Err()
}

// abandon passes on the writer that was handed to a Begin whose context
// ended just then, as a member that wrote nothing: the open group goes to
// the next waiter or ends (committing the members before).
func (w *writer) abandon() {
	w.mu.Lock()
	g := w.cur
	w.mu.Unlock()
	w.handOver(g)
}

// join returns the open group, or opens one. The caller owns the writer;
// first reports whether it is the group's first member (which runs without
// a savepoint: its rollback ends the group).
func (w *writer) join(ctx context.Context) (g *group, first bool, err error) {
	w.mu.Lock()
	g = w.cur
	w.mu.Unlock()
	if g != nil {
		return g, false, nil
	}
	// The group outlives the member that opens it: Config.Begin must not
	// tie the transaction to ctx (see there).
	tx, err := w.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	g = &group{tx: &deferredTx{TxConn: tx}, opened: time.Now(), done: make(chan struct{})}
	w.mu.Lock()
	w.cur = g
	w.mu.Unlock()
	return g, true, nil
}

// handOver ends the caller's ownership of the writer after its member of g
// (nil: none) finished. The writer goes to the next waiting Begin with the
// group still open when the group can take another member; otherwise the
// caller ends the group (commit, or rollback when it has no committed
// member or failed) before handing the writer on.
func (w *writer) handOver(g *group) {
	w.mu.Lock()
	if g != nil && g.failed == nil && len(w.waiters) > 0 &&
		g.members < maxGroupSize && time.Since(g.opened) < maxGroupAge {
		w.next()
		w.mu.Unlock()
		return
	}
	w.cur = nil
	w.mu.Unlock()
	if g != nil {
		g.end()
	}
	w.mu.Lock()
	if len(w.waiters) > 0 {
		w.next()
	} else {
		w.busy = false
	}
	w.mu.Unlock()
}

// next gives the writer to the oldest waiter. w.mu is held.
func (w *writer) next() {
	ch := w.waiters[0]
	w.waiters = w.waiters[1:]
	close(ch)
}

// end commits or rolls back the group's transaction and releases its
// members.
func (g *group) end() {
	ctx := context.Background()
	switch {
	case g.failed != nil:
		_ = g.tx.Rollback(ctx)
		g.err = g.failed
	case g.members == 0:
		g.err = g.tx.Rollback(ctx)
	case g.members > 1 && len(g.tx.held) > 0:
		// The held-back rows are the last member's (a later member's
		// Begin would have sent them): sent before the COMMIT, a refusal
		// undoes that member alone, to its savepoint.
		if err := g.tx.flush(ctx); err != nil {
			if _, rerr := g.tx.TxConn.Exec(ctx, "ROLLBACK TO SAVEPOINT "+savepoint); rerr != nil {
				_ = g.tx.Rollback(ctx)
				g.err = fmt.Errorf("the transaction group was rolled back: %w", errors.Join(err, rerr))
				break
			}
			g.lastErr = err
		}
		g.err = g.tx.Commit(ctx)
	default:
		g.err = g.tx.Commit(ctx)
	}
	close(g.done)
}

// fail marks the group failed by err (a member's savepoint could not be
// released or rolled back).
func (g *group) fail(err error) {
	if g.failed == nil {
		g.failed = fmt.Errorf("the transaction group was rolled back: %w", err)
	}
}

// wait returns the outcome of the group's commit, or gives up when ctx
// ends (the outcome is then unknown to the caller).
func (g *group) wait(ctx context.Context) error {
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return errors.Join(errors.New("commit outcome unknown"), ctx.Err())
	}
}
