package bleve

import "log/slog"

// DefaultColumnBudget is the default of WithColumnBudget: the estimated
// memory one index's column index may hold, a quarter of the 256 MiB a
// process plans for when nothing names a limit (cms passes its share of
// memoryLimit instead).
const DefaultColumnBudget = 64 << 20

// budget is what one index's columns may hold, and where they say that
// they outgrew it.
type budget struct {
	bytes int64 // 0 or less: no columns
	index string
	log   *slog.Logger
}

// The memory estimate of the columns: what their slices, maps and keys
// hold on the heap, allocation overhead included. BenchmarkColumnsMemory
// compares it with the heap the columns take.
const (
	// estIDRound: per document, the rounding of its id's allocation (on
	// average).
	estIDRound = 4
	// estPendingBytes: per key new to its column since the last flush,
	// its end and its start once flushed (its posting is in entries).
	estPendingBytes = 8
	// maxColumnBytes caps every budget: a column's codes and offsets are
	// 31-bit, which columns of this size cannot outgrow.
	maxColumnBytes = 4 << 30
)

// estimate is the memory the columns hold, in bytes (c.mu held).
func (c *columns) estimate() int64 {
	n := 16*int64(cap(c.ids)) + 4*int64(len(c.slots.tab)+cap(c.free)) + 8*int64(cap(c.live)) +
		c.idBytes + estIDRound*int64(c.slots.n)
	for _, col := range c.fields {
		n += col.bytes()
	}
	return n
}

// bytes is the memory a column holds, and will once flushed: its slices
// at their capacity (4 bytes a word), its dense codes' bitsets and range
// index, its keys, and the keys and postings of the writes since the
// last flush (a pending write's old codes are in many's capacity until
// then).
func (col *column) bytes() int64 {
	words := int64(cap(col.vals)+cap(col.many)+cap(col.ends)+cap(col.start)+cap(col.dense)) + max(int64(cap(col.post)), col.entries)
	for _, b := range col.sets {
		words += 2 * int64(len(b))
	}
	words += 2 * int64(len(col.present))
	return 4*words + col.ranges.bytes() + int64(len(col.dict)) + col.pendingBytes + estPendingBytes*int64(len(col.pending))
}

// fits reports whether est, the columns' estimated memory for docs
// documents, is within the budget; if not, columns are freed, least
// recently used first, until it is (shed), or all of them if the slots
// alone do not fit. c.mu is held for writing.
func (c *columns) fits(est, docs int64) bool {
	if est <= c.budget.bytes {
		return true
	}
	c.shed(est, docs, nil, 0)
	return false
}

// retry turns the columns of an index over its budget back on once its
// docs documents fit in it, with a tenth to spare, at the bytes per
// document they had then; the next search builds them again. It reports
// whether the columns are on.
func (c *columns) retry(docs uint64) bool {
	fit := func() bool { return int64(docs)*c.perDoc*11/10 <= c.budget.bytes }
	c.mu.RLock()
	still := c.over && !fit()
	c.mu.RUnlock()
	if still { // the common case: no write lock for every search
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.over || !fit() {
		return !c.off
	}
	c.over, c.off = false, false
	c.budget.log.Info("search columns within budget again", "index", c.budget.index, "documents", docs,
		"budget_bytes", c.budget.bytes)
	return true
}

// ColumnStats is the state of one index's column index.
type ColumnStats struct {
	Index string
	// Documents and Bytes: the documents the columns hold and their
	// estimated memory (0 when they are off or not built yet).
	Documents, Bytes int64
	// Budget is the most Bytes may be (0: columns are turned off).
	Budget int64
	// OverBudget: the columns outgrew Budget and Freed were freed;
	// searches needing them are answered by Bleve.
	OverBudget bool
	// AllFreed: even the slots outgrew Budget, so every column was freed
	// and every search of the index is answered by Bleve alone.
	AllFreed bool
	// Freed are the fields whose columns were freed for the budget.
	Freed []string
}

func (c *columns) stats() ColumnStats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := ColumnStats{Index: c.budget.index, Budget: max(c.budget.bytes, 0), OverBudget: c.over || len(c.freed) > 0,
		AllFreed: c.over, Freed: c.freedFields()}
	if c.built {
		s.Documents, s.Bytes = int64(c.slots.n), c.estimate()
	}
	return s
}
