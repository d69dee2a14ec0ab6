package tagcache

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
)

// Fence is what answers are fenced at and change events are applied in
// step with.
type Fence interface {
	// Position is the position an answer built from now on reflects at
	// least; it is read before the build and stored with the answer.
	Position(ctx context.Context) (int64, error)
	// Reach returns once answers built from now on reflect transaction
	// tx: the invalidator calls it for each change event before it evicts
	// the event's tags, so nothing built from older data is stored after.
	Reach(ctx context.Context, tx int64) error
	// Applied is called once the tags of the event of transaction tx are
	// evicted.
	Applied(tx int64)
}

// Starter is a Fence that must read a start position before its
// invalidator consumes (OutboxFence); the invalidator retries it while it
// fails.
type Starter interface {
	Start(ctx context.Context) error
}

// Index is the search index answers are built from, as Delivery reads it
// (pkg/delivery.Service, indexdoc.ChangeTracking).
type Index interface {
	Version(ctx context.Context) (int64, error)
	WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error)
}

// DefaultIndexWait bounds an IndexFence's wait for the indexer per event
// before the event is retried.
const DefaultIndexWait = 30 * time.Second

// IndexFence fences at the index's change-tracking version: an answer is
// stored at the version read before its build, and a change event is
// applied once the index shows its transaction (at most Wait per try).
// Callers that need a minimum version compare it with Entry.At.
type IndexFence struct {
	Index Index
	// Wait bounds the wait per event (DefaultIndexWait when 0).
	Wait time.Duration
}

// Position implements Fence: the index version.
func (f IndexFence) Position(ctx context.Context) (int64, error) { return f.Index.Version(ctx) }

// Reach implements Fence: it waits until the index shows tx.
func (f IndexFence) Reach(ctx context.Context, tx int64) error {
	wait := f.Wait
	if wait <= 0 {
		wait = DefaultIndexWait
	}
	if _, err := f.Index.WaitForVersion(ctx, tx, wait); err != nil {
		return fmt.Errorf("tagcache: wait for the index to show transaction %d: %w", tx, err)
	}
	return nil
}

// Applied implements Fence.
func (IndexFence) Applied(int64) {}

// Outbox reads the newest transaction that appended an event with a
// subject of the prefix (store.Store.LastOutboxTransaction).
type Outbox interface {
	LastOutboxTransaction(ctx context.Context, subjectPrefix string) (int64, error)
}

// OutboxFence fences at the store's newest change transaction W (answers
// built from the store see every transaction up to it). An answer is
// current only when this process has applied every change event up to W
// (Current): the events arrive in commit order, so every change committed
// before the lookup has then evicted what it touched. Start reads the
// start position P: events up to P are reflected in anything built from
// then on, and answers built before P are refused (Admits).
type OutboxFence struct {
	outbox Outbox
	// handled is the newest change transaction applied (or P).
	handled atomic.Int64
	// floor is P; started tells that it is set.
	floor   atomic.Int64
	started atomic.Bool
}

// NewOutboxFence returns the fence over o.
func NewOutboxFence(o Outbox) *OutboxFence { return &OutboxFence{outbox: o} }

// Position implements Fence: W, the newest change transaction.
func (f *OutboxFence) Position(ctx context.Context) (int64, error) {
	return f.outbox.LastOutboxTransaction(ctx, changes.SubjectPrefix)
}

// Reach implements Fence: the store shows every committed transaction.
func (*OutboxFence) Reach(context.Context, int64) error { return nil }

// Applied implements Fence: it raises the handled position to tx.
func (f *OutboxFence) Applied(tx int64) {
	for {
		cur := f.handled.Load()
		if tx <= cur || f.handled.CompareAndSwap(cur, tx) {
			return
		}
	}
}

// Start implements Starter: it reads P and marks it handled. The events
// after P must reach the invalidator.
func (f *OutboxFence) Start(ctx context.Context) error {
	p, err := f.Position(ctx)
	if err != nil {
		return err
	}
	f.floor.Store(p)
	f.Applied(p)
	f.started.Store(true)
	return nil
}

// Current reports whether answers stored before may serve a lookup that
// read position w: started, and every event up to w applied.
func (f *OutboxFence) Current(w int64) bool { return f.started.Load() && f.handled.Load() >= w }

// Admits reports whether an answer built after reading position at may be
// stored: started, and not built before the start position.
func (f *OutboxFence) Admits(at int64) bool { return f.started.Load() && at >= f.floor.Load() }

// Handled is the newest change transaction applied.
func (f *OutboxFence) Handled() int64 { return f.handled.Load() }
