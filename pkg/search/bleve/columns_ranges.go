package bleve

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// rangeSteps is how many parts of about equal numbers of postings the
// range index of a column (rangeIndex) cuts its codes into.
const rangeSteps = 16

// rangeIndex speeds up ranges on a column with one value per slot (but a
// few) and many codes (a price, a date, an id): below[j] holds the slots
// whose code is below codes[j], the codes at every sixteenth of the
// postings, so the slots of a span of codes [a, b) are below[j2] without
// below[j1] (one AND NOT per 64 slots) plus the postings of the codes
// between a and codes[j1] and between codes[j2] and b, at most two
// sixteenths of them, where marking every posting of the span visits up
// to half. It takes about 2 bytes per slot; it is built when a search
// first marks a span of the column (mark) and dropped when the column
// changes (flush).
type rangeIndex struct {
	codes []int
	below []bitset
	// multi are the slots with more than one value, left out of below and
	// checked one by one: at most one in 64.
	multi []int32
}

// rangeCache is a column's range index, built once per flush by the
// first search that wants it (searches share the columns' read lock).
type rangeCache struct {
	mu  sync.Mutex
	idx atomic.Pointer[rangeIndex]
}

// reset drops the index (the column changed; c.mu held for writing).
func (rc *rangeCache) reset() { rc.idx.Store(nil) }

// bytes is the memory the built index holds.
func (rc *rangeCache) bytes() int64 {
	r := rc.idx.Load()
	if r == nil {
		return 0
	}
	n := int64(8 * len(r.codes))
	for _, b := range r.below {
		n += 8 * int64(len(b))
	}
	return n
}

// rangeIndexed reports whether col may get a range index: many slots and
// many codes (and, checked when it is built, few slots with more than one
// value).
func rangeIndexed(col *column) bool {
	return len(col.vals) >= denseSlots && col.ncodes() >= 4*rangeSteps
}

// rangeIndexOf is col's range index, built if need be (nil: col gets
// none).
func (col *column) rangeIndexOf() *rangeIndex {
	if !rangeIndexed(col) {
		return nil
	}
	if r := col.ranges.idx.Load(); r != nil {
		return r
	}
	col.ranges.mu.Lock()
	defer col.ranges.mu.Unlock()
	if r := col.ranges.idx.Load(); r != nil {
		return r
	}
	r := &rangeIndex{}
	for s, v := range col.vals {
		if v&multi != 0 {
			if r.multi = append(r.multi, int32(s)); len(r.multi) > len(col.vals)/64 {
				r.multi = nil // an index of none: span declines
				col.ranges.idx.Store(r)
				return r
			}
		}
	}
	n := len(col.post)
	below := newBitset(len(col.vals))
	prev := 0
	for j := 1; j < rangeSteps; j++ {
		c := sort.Search(col.ncodes(), func(c int) bool { return int(col.start[c]) >= j*n/rangeSteps })
		if c <= prev {
			continue
		}
		below = append(bitset(nil), below...)
		for _, s := range col.postings(prev, c) {
			if col.vals[s]&multi == 0 {
				below.set(int32(s))
			}
		}
		r.codes, r.below = append(r.codes, c), append(r.below, below)
		prev = c
	}
	col.ranges.idx.Store(r)
	return r
}

// span returns the slots of codes [a, b) from the index and the postings
// at its ends, n slots long; false when no whole part of the index lies
// in the span, or its ends would cost more than visiting visit postings.
func (r *rangeIndex) span(col *column, a, b, n, visit int) (bitset, bool) {
	j1 := sort.SearchInts(r.codes, a)                  // first step at or after a
	j2 := sort.Search(len(r.codes), func(j int) bool { // last step at or before b
		return r.codes[j] > b
	}) - 1
	if j1 >= j2 || j2 < 0 {
		return nil, false
	}
	lo, hi := r.codes[j1], r.codes[j2]
	if ends := int(col.start[lo]-col.start[a]) + int(col.start[b]-col.start[hi]) + len(r.multi); ends+n/64 >= visit {
		return nil, false
	}
	out := newBitset(n)
	copy(out, r.below[j2])
	out.andNot(r.below[j1])
	out.setEach(col.postings(a, lo))
	out.setEach(col.postings(hi, b))
	var one [1]uint32
	for _, s := range r.multi {
		cs := col.codesOf(s, &one)
		if i, _ := slices.BinarySearch(cs, uint32(a)); i < len(cs) && int(cs[i]) < b {
			out.set(s)
		}
	}
	return out, true
}
