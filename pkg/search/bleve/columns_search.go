package bleve

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/cmsplatform/cms/pkg/search"
)

// colChange is one document a Bulk wrote (fields nil: deleted).
type colChange struct {
	id     string
	fields docFields
}

// bleveFields is the docFields of a document as toBleve built it.
func bleveFields(doc map[string]any) docFields {
	out := make(docFields, len(doc))
	for k, v := range doc {
		if !strings.HasPrefix(k, "@") {
			out[k] = v
		}
	}
	return out
}

// update applies what a Bulk wrote. The caller holds ix.wmu, so no
// build runs at the same time.
func (c *columns) update(changes []colChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || !c.built {
		return
	}
	for _, ch := range changes {
		c.put(ch.id, ch.fields)
	}
	c.fits(c.estimate(), int64(c.slots.n))
}

// drop turns the column index off and frees it.
func (c *columns) drop() {
	c.off, c.built = true, false
	c.slots, c.ids, c.free, c.live, c.fields = idTable{}, nil, nil, nil, nil
	c.idBytes = 0
}

// columnsOn reports whether the column index may answer: it is not off,
// or it was over its budget and the index's documents fit again (retry).
func (ix *index) columnsOn() bool {
	c := ix.cols
	c.mu.RLock()
	off, over := c.off, c.over
	c.mu.RUnlock()
	if !off {
		return true
	}
	if !over {
		return false
	}
	n, err := ix.bi.DocCount()
	return err == nil && c.retry(n)
}

// searchColumns answers a normalised req from the column index; ok is
// false when the index cannot (see planColumns) or is off.
func (ix *index) searchColumns(req search.SearchRequest) (res search.SearchResult, ok bool, err error) {
	plan, ok := ix.planColumns(req)
	if !ok || !ix.columnsOn() {
		return res, false, nil
	}
	c := ix.cols
	c.mu.RLock()
	if c.off {
		c.mu.RUnlock()
		return res, false, nil
	}
	// Read now, answered by the columns or not: the fields a search wants
	// are the last freed (columns_shed.go).
	c.touch(plan.fields)
	if slices.ContainsFunc(plan.fields, c.refused) { // a freed field that does not fit yet: Bleve answers
		c.mu.RUnlock()
		return res, false, nil
	}
	if !c.ready(plan.fields) {
		c.mu.RUnlock()
		if err := ix.prepareColumns(plan.fields); err != nil {
			return res, false, err
		}
		c.mu.RLock()
		if c.off || !c.ready(plan.fields) { // turned off, or written meanwhile: Bleve answers
			c.mu.RUnlock()
			return res, false, nil
		}
	}
	m := c.eval(ix, req.Query)
	total := m.count()
	page := c.page(m, req.Sort, req.From, req.Size)
	ids := make([]string, len(page))
	for i, s := range page {
		ids[i] = c.ids[s]
	}
	aggs := c.aggregate(ix, req, m)
	c.mu.RUnlock()
	res = search.SearchResult{Total: int64(total), Aggs: aggs}
	if len(ids) == 0 {
		return res, true, nil
	}
	r, err := ix.reader()
	if err != nil {
		return res, false, err
	}
	defer r.Close()
	res.Hits = make([]search.Hit, 0, len(ids))
	err = ix.loadEach(r, ids, req.Fields, req.Held, func(d search.Document, found bool) {
		if !found { // deleted since
			res.Total--
			return
		}
		res.Hits = append(res.Hits, search.Hit{ID: d.ID, Version: d.Version, Score: 1, Fields: d.Fields})
	})
	if err != nil {
		return res, false, err
	}
	return res, true, nil
}

// ready reports whether every field has a clean column (c.mu held).
func (c *columns) ready(fields []string) bool {
	if !c.built {
		return false
	}
	for _, f := range fields {
		col, ok := c.fields[f]
		if !ok || col.dirty {
			return false
		}
	}
	return true
}

// prepareColumns loads the slots (first use), builds missing columns by
// reading every document, and merges pending changes. It holds the
// index's write lock so no Bulk runs meanwhile.
func (ix *index) prepareColumns(fields []string) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	c := ix.cols
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return nil
	}
	if !c.built { // the slots first: whether a freed field fits depends on them
		if err := ix.loadColumns(nil); err != nil {
			return err
		}
		if c.off {
			return nil
		}
	}
	var missing []string
	for _, f := range fields {
		if _, ok := c.fields[f]; ok {
			continue
		}
		if c.refused(f) { // freed, and does not fit yet: Bleve answers
			return nil
		}
		if _, ok := c.freed[f]; ok {
			delete(c.freed, f)
			c.budget.log.Info("search columns: a freed field fits the budget again, its column is built again",
				"index", c.budget.index, "field", f, "budget_bytes", c.budget.bytes)
		}
		missing = append(missing, f)
	}
	if len(missing) > 0 {
		if err := ix.loadColumns(missing); err != nil {
			return err
		}
		if c.off {
			return nil
		}
	}
	for _, f := range fields {
		if col, ok := c.fields[f]; ok {
			col.flush()
		}
	}
	return nil
}

// loadColumns reads every document into the named new columns (and the
// slots, on first use). c.mu is held for writing.
func (ix *index) loadColumns(names []string) error {
	c := ix.cols
	r, err := ix.reader()
	if err != nil {
		return err
	}
	defer r.Close()
	if !c.built {
		c.slots, c.fields, c.live = idTable{}, map[string]*column{}, nil
		c.ids, c.free, c.idBytes = nil, nil, 0
		if err := eachDocID(r, func(id string) { c.slot(id) }); err != nil {
			return err
		}
		c.built = true
		if !c.fits(c.estimate(), int64(c.slots.n)) {
			return nil
		}
	}
	if len(names) == 0 {
		return nil
	}
	added := make([]*column, len(names))
	t := c.clock.Add(1)
	for i, n := range names {
		added[i] = &column{vals: make([]uint32, len(c.ids))}
		added[i].used.Store(t)
		c.fields[n] = added[i]
	}
	// The budget is checked as the columns fill: an index that outgrows
	// it stops reading, having taken at most a chunk more.
	const chunk = 1024
	base, docs, done := c.estimate(), int64(c.slots.n), int64(0)
	for s, id := range c.ids {
		if id == "" {
			continue
		}
		if done++; done%chunk == 0 {
			// Projected over every document, for the bytes per document
			// fits records.
			// Projected over every document: other columns are freed
			// to make room (shed), and if these must go too, Bleve
			// answers this search.
			if est := c.estimate(); est > c.budget.bytes {
				if !c.shed(base+(est-base)*docs/done, docs, names, done) || !c.holds(names) {
					return nil
				}
				base = c.estimate() - (est - base)
			}
		}
		d, ok, err := ix.load(r, id)
		if err != nil {
			return err
		}
		if !ok { // deleted before the reader's snapshot was taken
			c.put(id, nil)
			continue
		}
		f := make(docFields, len(d.Fields))
		for k, v := range d.Fields {
			if ix.kind(k) != search.Stored {
				f[k] = v
			}
		}
		for i, n := range names {
			if n == colID {
				added[i].setSlot(int32(s), []string{id})
			} else {
				added[i].setSlot(int32(s), f.value(n))
			}
		}
	}
	c.shed(c.estimate(), docs, names, docs)
	return nil
}

// holds reports whether every field has a column (c.mu held).
func (c *columns) holds(fields []string) bool {
	for _, f := range fields {
		if _, ok := c.fields[f]; !ok {
			return false
		}
	}
	return true
}

// eachDocID calls fn with the id of every live document of r.
func eachDocID(r bleveindex.IndexReader, fn func(id string)) error {
	dr, err := r.DocIDReaderAll()
	if err != nil {
		return fmt.Errorf("bleve: columns: %w", err)
	}
	defer dr.Close()
	for {
		iid, err := dr.Next()
		if err != nil {
			return fmt.Errorf("bleve: columns: %w", err)
		}
		if iid == nil {
			return nil
		}
		id, err := r.ExternalID(iid)
		if err != nil {
			return fmt.Errorf("bleve: columns: %w", err)
		}
		fn(id)
	}
}

// eval returns the slots matching q (c.mu held, columns ready).
func (c *columns) eval(ix *index, q search.Query) bitset {
	n := len(c.ids)
	switch q := q.(type) {
	case search.MatchAll:
		return slices.Clone(c.live)
	case search.IDs:
		out := newBitset(n)
		for _, id := range q {
			if s, ok := c.slots.get(c.ids, id); ok {
				out.set(s)
			}
		}
		return out
	case search.Term:
		k, _ := colKey(q.Value)
		return c.span(c.fields[q.Field], k, true, k, true)
	case search.Terms:
		out := newBitset(n)
		for _, v := range q.Values {
			k, _ := colKey(v)
			out.or(c.span(c.fields[q.Field], k, true, k, true))
		}
		return out
	case search.Range:
		return c.rangeSlots(ix, q)
	case search.Prefix:
		col := c.fields[q.Field]
		lo := col.lower(q.Value, false)
		return c.mark(col, lo, col.prefixEnd(lo, q.Value))
	case search.Exists:
		return c.span(c.fields[colPresent], q.Field, true, q.Field, true)
	case search.And:
		return c.evalAnd(ix, q)
	case search.Or:
		out := newBitset(n)
		for _, s := range q {
			out.or(c.eval(ix, s))
		}
		return out
	case search.Not:
		out := slices.Clone(c.live)
		out.andNot(c.eval(ix, q.Query))
		return out
	}
	return newBitset(n) // planColumns admits no other node
}

// smallMatches is the most slots a Term may match for evalAnd to check
// the other clauses slot by slot, and a match set may hold for page to
// sort it directly.
const smallMatches = 256

// evalAnd intersects the clauses of q. When a Term among them matches at
// most smallMatches slots (an id, an ApiIdentifier), the clauses that are
// Terms or negated Terms are checked on those slots alone instead of being
// expanded over every document (a branch or deleted flag matches them
// all); the others are evaluated as usual.
func (c *columns) evalAnd(ix *index, q search.And) bitset {
	best, bestN := -1, smallMatches+1
	for i, s := range q {
		if t, ok := s.(search.Term); ok {
			col := c.fields[t.Field]
			k, _ := colKey(t.Value)
			if n := len(col.postings(col.lower(k, false), col.lower(k, true))); n < bestN {
				best, bestN = i, n
			}
		}
	}
	if best < 0 {
		out := slices.Clone(c.live)
		for _, s := range q {
			out.and(c.eval(ix, s))
		}
		return out
	}
	out := c.eval(ix, q[best])
	out.and(c.live)
	for i, s := range q {
		if i == best {
			continue
		}
		t, negated, ok := termClause(s)
		if !ok {
			out.and(c.eval(ix, s))
			continue
		}
		col := c.fields[t.Field]
		k, _ := colKey(t.Value)
		code, found := col.find(k)
		for w, word := range out {
			for word != 0 {
				slot := int32(w*64 + bits.TrailingZeros64(word))
				word &= word - 1
				if (found && col.hasCode(slot, uint32(code))) == negated {
					out.clear(slot)
				}
			}
		}
	}
	return out
}

// termClause returns q as a Term, and whether it is negated (Not{Term}).
func termClause(q search.Query) (t search.Term, negated, ok bool) {
	if n, isNot := q.(search.Not); isNot {
		q, negated = n.Query, true
	}
	t, ok = q.(search.Term)
	return t, negated, ok
}

// span marks the slots of col with a key between lo and hi; open says a
// bound is absent ("" with loOpen/hiOpen false is a real bound).
func (c *columns) span(col *column, lo string, loIncl bool, hi string, hiIncl bool) bitset {
	return c.spanOpen(col, lo, loIncl, false, hi, hiIncl, false)
}

func (c *columns) spanOpen(col *column, lo string, loIncl, loOpen bool, hi string, hiIncl, hiOpen bool) bitset {
	a, b := 0, col.ncodes()
	if !loOpen {
		a = col.lower(lo, !loIncl)
	}
	if !hiOpen {
		b = col.lower(hi, hiIncl)
	}
	return c.mark(col, a, b)
}

// mark returns the slots of col with a code in [a, b). When every
// document has exactly one value of col and most are in the span (a
// branch, a type every object has), it takes every document but those of
// the other codes, which is fewer to visit. A span wider than two
// sixteenths of the postings of a column with a range index is read from
// it where that visits fewer (rangeIndex); the dense codes of a span are
// read from their bitsets.
func (c *columns) mark(col *column, a, b int) bitset {
	in := col.postings(a, b)
	complement := 2*len(in) > len(col.post) && len(col.many) == 0 && col.entries == int64(c.slots.n)
	if len(in) > 2*len(col.post)/rangeSteps {
		if r := col.rangeIndexOf(); r != nil {
			visit := len(in)
			if complement {
				visit = len(col.post) - len(in) + len(c.ids)/64
			}
			if out, ok := r.span(col, a, b, len(c.ids), visit); ok {
				return out
			}
		}
	}
	if complement {
		out := slices.Clone(c.live)
		for _, s := range col.post[:col.start[a]] {
			out.clear(int32(s))
		}
		for _, s := range col.post[col.start[b]:] {
			out.clear(int32(s))
		}
		return out
	}
	out := newBitset(len(c.ids))
	// The dense codes of the span by their bitsets, the others by their
	// postings.
	from := a
	for i, _ := slices.BinarySearch(col.dense, uint32(a)); i < len(col.dense) && int(col.dense[i]) < b; i++ {
		out.setEach(col.postings(from, int(col.dense[i])))
		out.or(col.sets[i])
		from = int(col.dense[i]) + 1
	}
	out.setEach(col.postings(from, b))
	return out
}

// rangeSlots evaluates a Range as Bleve's range queries do (rangeQuery):
// an absent bound, an empty upper keyword bound and a zero date leave that
// side open.
func (c *columns) rangeSlots(ix *index, r search.Range) bitset {
	lo, loIncl, hi, hiIncl := rangeBounds(r)
	open := func(v any) bool {
		switch x := v.(type) {
		case nil:
			return true
		case string:
			return x == ""
		case time.Time:
			return x.IsZero()
		}
		return false
	}
	n := len(c.ids)
	if ix.kind(r.Field) == search.Keyword && lo == nil && hi == "" && !hiIncl {
		return newBitset(n) // < "" matches nothing
	}
	lk, _ := colKey(lo)
	hk, _ := colKey(hi)
	loOpen := open(lo)
	if ix.kind(r.Field) == search.Keyword {
		// Bleve starts a term range at "" even without a lower bound: the
		// empty term is in it only for Gte "".
		loOpen = false
	}
	return c.spanOpen(c.fields[r.Field], lk, loIncl, loOpen, hk, hiIncl, open(hi))
}
