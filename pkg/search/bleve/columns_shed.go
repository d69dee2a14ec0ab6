package bleve

import (
	"cmp"
	"slices"
	"strings"
)

// Degrading under the budget: an index whose columns outgrow it frees
// them one field at a time, least recently used first (column.used, the
// clock of the last search that read the column; among those last read
// by the same search, the least used first, column.uses). The fields
// every list reads (branch, type, deleted) are read by every search, so
// they are the most recently and most often used and go last; the ids
// column (colID), which every search reads, is never freed alone: when
// it would be, everything is. A search
// over the fields still held stays on the columns; one needing a freed
// field is answered by Bleve until that field fits again (refused), when
// the first search needing it builds its column again. A freed field
// comes back only if it fits beside the columns held, without freeing
// others, so two searches over different fields do not take turns
// rebuilding them. Only when the slots and ids alone outgrow the budget
// is everything freed (drop) and every search answered by Bleve.

// shed frees columns until est, the estimated bytes of the columns for
// docs documents, is within the budget, and reports whether anything is
// still held. loading are the columns being filled (done documents of
// docs read so far): their bytes are projected over every document, and
// they are freed after the others. c.mu is held for writing.
func (c *columns) shed(est, docs int64, loading []string, done int64) bool {
	if est <= c.budget.bytes {
		return true
	}
	size := func(name string, col *column) int64 {
		b := col.bytes()
		if done > 0 && done < docs && slices.Contains(loading, name) {
			b = b * docs / done
		}
		return b
	}
	before := est
	var names []string
	for est > c.budget.bytes {
		name, col := c.lru(loading)
		if col == nil || name == colID {
			break
		}
		b := size(name, col)
		est -= b
		delete(c.fields, name)
		if c.freed == nil {
			c.freed = map[string]int64{}
		}
		c.freed[name] = max(b/max(docs, 1), 1)
		names = append(names, name)
	}
	if est > c.budget.bytes { // the slots and ids alone do not fit
		c.over, c.perDoc = true, max(est/max(docs, 1), 1)
		c.drop()
		if !c.warned {
			c.warned = true
			c.budget.log.Warn("search columns over budget: all freed, this index's lists, sorts and facets are answered by Bleve alone "+
				"(a page costs about its number of matches); raise memoryLimit or searchColumnsMaxBytes",
				"index", c.budget.index, "documents", docs, "estimated_bytes", before, "budget_bytes", c.budget.bytes)
		}
		return false
	}
	var fresh []string
	for _, n := range names {
		if !c.warnedFields[n] {
			if c.warnedFields == nil {
				c.warnedFields = map[string]bool{}
			}
			c.warnedFields[n] = true
			fresh = append(fresh, n)
		}
	}
	if len(fresh) > 0 {
		c.budget.log.Warn("search columns over budget: fields freed, least recently used first; searches needing them are answered "+
			"by Bleve (a page costs about its number of matches), the others stay on the columns; raise memoryLimit or searchColumnsMaxBytes",
			"index", c.budget.index, "fields", strings.Join(fresh, ","), "documents", docs,
			"estimated_bytes", before, "budget_bytes", c.budget.bytes)
	}
	return true
}

// lru returns the least recently used column, those in last after all
// the others and colID last of all (nil: none left).
func (c *columns) lru(last []string) (string, *column) {
	var name string
	var best *column
	order := func(n string, col *column, m string, o *column) int {
		return cmp.Or(boolCompare(n == colID, m == colID), boolCompare(slices.Contains(last, n), slices.Contains(last, m)),
			cmp.Compare(col.used.Load(), o.used.Load()), cmp.Compare(col.uses.Load(), o.uses.Load()), strings.Compare(n, m))
	}
	for n, col := range c.fields {
		if best == nil || order(n, col, name, best) < 0 {
			name, best = n, col
		}
	}
	return name, best
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// refused reports whether field name was freed for the budget and does
// not fit beside the columns held yet, with a tenth to spare (c.mu held).
func (c *columns) refused(name string) bool {
	per, ok := c.freed[name]
	if !ok {
		return false
	}
	return c.estimate()+int64(c.slots.n)*per*11/10 > c.budget.bytes
}

// touch records that a search reads fields (c.mu held, for reading at
// least): those with a column.
func (c *columns) touch(fields []string) {
	t := c.clock.Add(1)
	for _, f := range fields {
		if col, ok := c.fields[f]; ok {
			col.used.Store(t)
			col.uses.Add(1)
		}
	}
}

// freedFields are the fields freed for the budget, sorted.
func (c *columns) freedFields() []string {
	out := make([]string, 0, len(c.freed))
	for n := range c.freed {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
