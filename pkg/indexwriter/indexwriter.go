// Package indexwriter is what writes the search index: it turns committed
// content changes into search documents. It builds one document per (branch, visible object) from the store,
// inheritance resolved, and applies change events (pkg/content's outbox
// payload) to the objects index of a search.Engine. services/indexer feeds
// it from the event stream; the Index and Delivery groups read the index it
// writes and wait on its change-tracking version for read-your-writes.
//
// The document schema (index names, fields and their encodings, the
// stored source, sort keys, comment documents) is pkg/indexdoc's, shared
// with the readers.
//
// # Versions
//
// Every document carries the transaction id of the event that built it as
// its external version, and is always built from the store's current
// state. A replayed or out-of-order event therefore writes nothing new (its
// version is stale) or writes the current state, and the tombstone of an
// object that is gone (purged with its branch, never visible on the
// branch) keeps older events from resurrecting it. A soft-deleted object
// is no tombstone: its document stays, with indexdoc.FieldDeleted = true
// (the Index API's deleted filter, objectCount and deleted occurrences
// count it, and Delivery shows it only with deleted=true), and a restored
// one is rebuilt live from the store like any change. After each event
// (Apply) or batch of consecutive events (ApplyBatch, batch.go) the index
// is refreshed and the newest transaction id is recorded as the
// change-tracking version: the external version of the indexdoc.VersionDocID
// document in indexdoc.StateIndex, durable and monotonic by construction. It is
// global across branches. With one in-order consumer (services/indexer) it
// means "every transaction up to it is searchable or parked": a parked
// event (park.go) is in the durable parked list (indexdoc.ParkedIndex),
// written before its version, and readers never count it as visible
// (indexdoc.ChangeTracking.WaitForVisible).
package indexwriter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Defaults of Options.
const (
	DefaultBatch        = 500
	DefaultPollInterval = indexdoc.DefaultPollInterval
	// DefaultMaxIndexedChars: 32768 characters analysed per value.
	DefaultMaxIndexedChars = 32 << 10
)

// Options tune an Indexer; zero values get defaults.
type Options struct {
	// Layout names the indexes (IndexPrefix) and the languages with
	// display-name fields (Languages, filled along each language's
	// fallback chain: fallback.go); readers use the same Layout.
	indexdoc.Layout
	// Batch is how many objects are read and written at once (DefaultBatch).
	Batch int
	// MaxIndexedChars caps the characters (runes) of one value that text
	// fields and indexdoc.FieldWords analyse (DefaultMaxIndexedChars): a longer
	// value is found by its beginning only, so indexing memory stays
	// bounded whatever the size of stored values.
	MaxIndexedChars int
	// PollInterval is how often WaitForVersion reads the version.
	PollInterval time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// Indexer builds and writes object documents. It is safe for concurrent
// use, but Apply calls should come from one in-order consumer so that the
// change-tracking version means "everything up to it".
type Indexer struct {
	st      store.Reader
	eng     search.Engine
	log     *slog.Logger
	opts    Options
	objects string
	state   string
	parked  string
	mapping search.Mapping

	mu       sync.Mutex
	ensured  bool
	changed  chan struct{} // closed and replaced when a version is recorded
	tracking indexdoc.ChangeTracking
	txCache  map[int64]store.Transaction
	maxCache int
}

// New returns an indexer reading st and writing eng.
func New(st store.Reader, eng search.Engine, opts Options) (*Indexer, error) {
	if opts.Languages == nil {
		opts.Languages = indexdoc.DefaultLanguages
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.MaxIndexedChars <= 0 {
		opts.MaxIndexedChars = DefaultMaxIndexedChars
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ix := &Indexer{st: st, eng: eng, log: opts.Logger, opts: opts,
		objects: opts.IndexPrefix + indexdoc.ObjectsIndex, state: opts.IndexPrefix + indexdoc.StateIndex,
		parked:  opts.IndexPrefix + indexdoc.ParkedIndex,
		mapping: indexdoc.Mapping(opts.Languages), changed: make(chan struct{}),
		txCache: map[int64]store.Transaction{}, maxCache: 10000}
	ix.tracking = indexdoc.NewChangeTracking(eng, opts.IndexPrefix, opts.PollInterval, ix.wake)
	for _, n := range []string{ix.objects, ix.state, ix.parked} {
		if err := search.ValidIndexName(n); err != nil {
			return nil, fmt.Errorf("indexwriter: %w", err)
		}
	}
	if err := ix.mapping.Validate(); err != nil {
		return nil, fmt.Errorf("indexwriter: %w", err)
	}
	return ix, nil
}

// ObjectsIndex is the name of the objects index (without the engine prefix).
func (ix *Indexer) ObjectsIndex() string { return ix.objects }

// Mapping is the objects index mapping.
func (ix *Indexer) Mapping() search.Mapping { return ix.mapping }

// EnsureIndexes creates the objects, state and parked-list indexes if needed. Apply
// calls it once; call it at start-up to fail fast on a mapping conflict.
func (ix *Indexer) EnsureIndexes(ctx context.Context) error {
	ix.mu.Lock()
	done := ix.ensured
	ix.mu.Unlock()
	if done {
		return nil
	}
	if err := ix.eng.EnsureIndex(ctx, ix.objects, ix.mapping); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.objects, err)
	}
	if err := ix.eng.EnsureIndex(ctx, ix.state, indexdoc.StateMapping()); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.state, err)
	}
	if err := ix.eng.EnsureIndex(ctx, ix.parked, indexdoc.ParkedMapping()); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.parked, err)
	}
	ix.mu.Lock()
	ix.ensured = true
	ix.mu.Unlock()
	return nil
}

// Ping checks that the engine answers (nil for an engine without Ping,
// an embedded one that is always there).
func (ix *Indexer) Ping(ctx context.Context) error {
	if p, ok := ix.eng.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// CurrentVersion returns the applied change-tracking version, 0 before the
// first event (indexdoc.ChangeTracking.Version).
func (ix *Indexer) CurrentVersion(ctx context.Context) (int64, error) {
	return ix.tracking.Version(ctx)
}

// WaitForVersion waits until the change-tracking version is at least
// minVersion or maxWait has passed (indexdoc.ChangeTracking.WaitForVersion:
// indexdoc.ErrWaitTimeout on timeout). It polls the engine every
// PollInterval, so it works across processes; this indexer's Apply calls
// wake it at once.
func (ix *Indexer) WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	return ix.tracking.WaitForVersion(ctx, minVersion, maxWait)
}

// wake returns the channel closed at the next recorded change.
func (ix *Indexer) wake() <-chan struct{} {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.changed
}

// recordVersion stores v as the change-tracking version (a stale v is
// ignored by the engine) and wakes local waiters.
func (ix *Indexer) recordVersion(ctx context.Context, v int64) error {
	_, err := ix.eng.Bulk(ctx, ix.state, []search.Op{search.Upsert(search.Document{
		ID: indexdoc.VersionDocID, Version: v, Fields: map[string]any{"version": v}})})
	if err != nil {
		return fmt.Errorf("indexwriter: record version %d: %w", v, err)
	}
	ix.wakeWaiters()
	return nil
}

// wakeWaiters ends the current poll of local waiters.
func (ix *Indexer) wakeWaiters() {
	ix.mu.Lock()
	close(ix.changed)
	ix.changed = make(chan struct{})
	ix.mu.Unlock()
}
