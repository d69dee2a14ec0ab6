// Package bleve is the embedded search.Engine: one Bleve v2 (scorch) index per
// index name, in a directory or in memory.
//
// Versions and tombstones live in a version store next to each index (a
// bbolt file in its directory, a map in memory; versions.go), written
// after each batch of documents, so a stale op is recognised even after
// its document was deleted. Tombstones are kept until the index is
// deleted. Indexes written before the version store keep their older
// records as Bleve internal keys ("v:<id>"), read when the store has none
// and removed as their documents are written again. Writes are visible
// to Get and Search as soon as Bulk returns; Refresh is therefore a no-op.
//
// On-disk indexes are compacted in the background once deleted copies of
// updated documents pile up (compact.go), which bounds the folder's size.
//
// In-memory indexes use Scorch without a path (segments in memory, no
// persister and no merger, so every Bulk adds a segment: fine for tests
// and short-lived engines, which is what the in-memory mode is for).
// Hits and Get read a document's version from the version store and
// its fields from a per-index cache of decoded sources keyed by (id,
// version), decoding the stored source only on a miss (doccache.go,
// load.go); a bare IDs query is answered by those lookups, not a search.
package bleve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cmsplatform/cms/pkg/search"
)

// Engine is a search.Engine over Bleve indexes.
type Engine struct {
	dir string // "" = in memory
	log *slog.Logger
	// columnBudget is the most memory (estimated) one index's column
	// index may hold (columns.go; 0 = none).
	columnBudget int64
	// docCacheBytes bounds each index's decoded-document cache
	// (doccache.go).
	docCacheBytes int64

	mu      sync.Mutex
	indexes map[string]*index
	aliases map[string]string // alias → index (alias.go)
	closed  bool
}

var _ search.Engine = (*Engine)(nil)

// Option configures an Engine.
type Option func(*Engine)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// WithColumnBudget sets the most memory, estimated in bytes, one index's
// in-memory column index may hold (default DefaultColumnBudget; 0 or less
// turns it off, so every search goes to Bleve; at most 4 GiB). An index whose columns
// outgrow it frees them a field at a time, least recently used first, and
// the searches reading a freed field are answered by Bleve (all of them
// when even the slots do not fit), logged at WARN and shown in
// ColumnStats. See columns.go and columns_shed.go.
func WithColumnBudget(bytes int64) Option { return func(e *Engine) { e.columnBudget = bytes } }

// WithDocCacheBytes bounds the memory of the decoded documents each
// index keeps (default DefaultDocCacheBytes; see doccache.go).
func WithDocCacheBytes(n int64) Option {
	return func(e *Engine) {
		if n > 0 {
			e.docCacheBytes = n
		}
	}
}

// New returns an engine keeping one index per name in dir/<name>. An empty dir
// keeps everything in memory (lost on Close).
func New(dir string, opts ...Option) (*Engine, error) {
	e := &Engine{dir: dir, log: slog.New(slog.DiscardHandler), indexes: map[string]*index{}, columnBudget: DefaultColumnBudget,
		docCacheBytes: DefaultDocCacheBytes}
	for _, o := range opts {
		o(e)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("bleve: %w", err)
		}
	}
	var err error
	if e.aliases, err = loadAliases(dir); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Engine) path(name string) string { return filepath.Join(e.dir, name) }

// lookup returns the open index, opening it from disk if needed.
func (e *Engine) lookup(name string) (*index, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lookupLocked(name)
}

func (e *Engine) lookupLocked(name string) (*index, error) {
	if e.closed {
		return nil, search.ErrClosed
	}
	if target, ok := e.aliases[name]; ok {
		name = target
	}
	if ix, ok := e.indexes[name]; ok {
		return ix, nil
	}
	if e.dir == "" || search.ValidIndexName(name) != nil {
		return nil, fmt.Errorf("%w: %q", search.ErrIndexNotFound, name)
	}
	if _, err := os.Stat(e.path(name)); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", search.ErrIndexNotFound, name)
	}
	ix, err := openIndex(e.path(name))
	if err != nil {
		return nil, err
	}
	ix.cols, ix.docs = newColumns(e.budget(name)), newDocCacheOf(e.docCacheBytes)
	e.indexes[name] = ix
	return ix, nil
}

// budget is the column budget of index name (at most maxColumnBytes).
func (e *Engine) budget(name string) budget {
	return budget{bytes: min(e.columnBudget, maxColumnBytes), index: name, log: e.log}
}

// ColumnStats reports the column index of every open index, by name.
func (e *Engine) ColumnStats() []ColumnStats {
	e.mu.Lock()
	ixs := make([]*index, 0, len(e.indexes))
	for _, ix := range e.indexes {
		ixs = append(ixs, ix)
	}
	e.mu.Unlock()
	out := make([]ColumnStats, len(ixs))
	for i, ix := range ixs {
		out[i] = ix.cols.stats()
	}
	slices.SortFunc(out, func(a, b ColumnStats) int { return strings.Compare(a.Index, b.Index) })
	return out
}

// EnsureIndex implements search.Engine.
func (e *Engine) EnsureIndex(_ context.Context, name string, m search.Mapping) error {
	if err := search.ValidIndexName(name); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ix, err := e.lookupLocked(name)
	switch {
	case err == nil:
		if !ix.mapping.Equal(m) {
			return fmt.Errorf("%w: %q", search.ErrMappingConflict, name)
		}
		return nil
	case !errors.Is(err, search.ErrIndexNotFound):
		return err
	}
	path := ""
	if e.dir != "" {
		path = e.path(name)
	}
	ix, err = createIndex(path, m)
	if err != nil {
		return err
	}
	ix.cols, ix.docs = newColumns(e.budget(name)), newDocCacheOf(e.docCacheBytes)
	e.indexes[name] = ix
	e.log.Info("search index created", "index", name, "dir", path)
	return nil
}

// DeleteIndex implements search.Engine.
func (e *Engine) DeleteIndex(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, isAlias := e.aliases[name]; isAlias {
		return fmt.Errorf("%w: %q is an alias", search.ErrIndexNotFound, name)
	}
	ix, err := e.lookupLocked(name)
	if err != nil {
		return err
	}
	if err := e.dropAliasesLocked(name); err != nil {
		return err
	}
	delete(e.indexes, name)
	if err := ix.close(); err != nil {
		return err
	}
	if e.dir != "" {
		if err := os.RemoveAll(e.path(name)); err != nil {
			return fmt.Errorf("bleve: delete index %q: %w", name, err)
		}
	}
	e.log.Info("search index deleted", "index", name)
	return nil
}

// Bulk implements search.Engine.
func (e *Engine) Bulk(ctx context.Context, name string, ops []search.Op) (search.BulkResult, error) {
	ix, err := e.lookup(name)
	if err != nil {
		return search.BulkResult{}, err
	}
	return ix.bulk(ctx, ops)
}

// Get implements search.Engine.
func (e *Engine) Get(_ context.Context, name, id string) (search.Document, error) {
	ix, err := e.lookup(name)
	if err != nil {
		return search.Document{}, err
	}
	return ix.get(id)
}

// Search implements search.Engine.
func (e *Engine) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	ix, err := e.lookup(req.Index)
	if err != nil {
		return search.SearchResult{}, err
	}
	return ix.search(ctx, req)
}

// Count implements search.Engine.
func (e *Engine) Count(ctx context.Context, name string, q search.Query) (int64, error) {
	res, err := e.Search(ctx, search.SearchRequest{Index: name, Query: q})
	return res.Total, err
}

// Refresh implements search.Engine. Bleve makes a batch searchable before
// Batch returns, so there is nothing to do beyond checking the index exists.
func (e *Engine) Refresh(_ context.Context, name string) error {
	_, err := e.lookup(name)
	return err
}

// Close closes all open indexes.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return search.ErrClosed
	}
	e.closed = true
	var errs []error
	for name, ix := range e.indexes {
		errs = append(errs, ix.close())
		delete(e.indexes, name)
	}
	return errors.Join(errs...)
}
