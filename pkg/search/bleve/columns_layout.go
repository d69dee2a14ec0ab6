package bleve

import (
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// The layout of one column (one field), dictionary-encoded so that a
// document costs a few 4-byte words per value, not a string per value:
//
//   - dict and ends: the distinct keys of the field, in ascending order,
//     concatenated into one string; key c is dict[ends[c-1]:ends[c]]. A
//     key's code is its rank, so codes compare as their keys do.
//   - vals: per slot, 0 (no value), the code of its only value plus 1, or
//     multi|i: many[i] is the number of its codes and they follow it, in
//     ascending order (so the first is the minimum, the last the maximum).
//   - start and post: the postings, the slots of code c in ascending order
//     at post[start[c]:start[c+1]]; a span of codes (a Term, a Range, a
//     Prefix) is a span of post.
//   - dense: the codes that a sixteenth of the slots or more have, their
//     slots also as a bitset (sets[i] for dense[i]): an aggregation
//     counts a code in the slots a search matches by one AND and
//     popcount per 64 slots instead of one lookup per posting. Such a
//     bitset takes at most half the bytes of the code's postings. With
//     them, present has the slots with a value (an aggregation's missing
//     count).
//
// A write (setSlot) looks its keys up in dict; a key not in it gets a
// provisional code after dict's (pending, in the order of arrival). The
// next search merges the pending keys into dict, drops keys no slot has
// any more, renumbers the codes of every slot and rebuilds the postings
// by counting (flush): one pass over the column however many documents
// changed, as a merge of sorted arrays would take.

// multi marks a vals word that points into many.
const multi = 1 << 31

type column struct {
	dict    string
	ends    []uint32
	vals    []uint32
	many    []uint32
	start   []uint32
	post    []uint32
	dense   []uint32
	sets    []bitset
	present bitset // the slots with a value, for a column with dense codes' bitsets
	// ranges is the range index of a column with one value per slot
	// (columns_ranges.go), built on demand.
	ranges rangeCache
	// pending are the keys written since the last flush that dict does
	// not have, code len(ends)+i for pending[i]; pendingCode finds them.
	pending     []string
	pendingCode map[string]uint32
	// pendingBytes is the length of the pending keys; entries the number
	// of values the slots hold (the postings' length once flushed).
	pendingBytes, entries int64
	dirty                 bool // written since the last flush
	// used is the columns' clock when a search last read the column,
	// uses the number of searches that read it.
	used, uses atomic.Int64
}

// ncodes is the number of keys in dict.
func (col *column) ncodes() int { return len(col.ends) }

// key is the key of code c (a substring of dict: clone what outlives the
// search).
func (col *column) key(c int) string {
	lo := uint32(0)
	if c > 0 {
		lo = col.ends[c-1]
	}
	return col.dict[lo:col.ends[c]]
}

// lower is the first code whose key is >= k (> k when strict).
func (col *column) lower(k string, strict bool) int {
	return sort.Search(col.ncodes(), func(c int) bool {
		r := strings.Compare(col.key(c), k)
		return r > 0 || (r == 0 && !strict)
	})
}

// find returns the code of k, if dict has it.
func (col *column) find(k string) (int, bool) {
	c := col.lower(k, false)
	return c, c < col.ncodes() && col.key(c) == k
}

// prefixEnd is the first code from lo on whose key does not start with p
// (the keys that do follow lower(p) in a run).
func (col *column) prefixEnd(lo int, p string) int {
	return lo + sort.Search(col.ncodes()-lo, func(i int) bool { return !strings.HasPrefix(col.key(lo+i), p) })
}

// postings are the slots of the codes [a, b), each code's in ascending
// order.
func (col *column) postings(a, b int) []uint32 {
	if a >= b {
		return nil
	}
	return col.post[col.start[a]:col.start[b]]
}

// codesOf returns the codes of slot s, ascending; one is scratch room for
// a slot of one value.
func (col *column) codesOf(s int32, one *[1]uint32) []uint32 {
	if int(s) >= len(col.vals) {
		return nil
	}
	switch v := col.vals[s]; {
	case v == 0:
		return nil
	case v&multi == 0:
		one[0] = v - 1
		return one[:]
	default:
		i := v &^ multi
		return col.many[i+1 : i+1+col.many[i]]
	}
}

// empty reports whether slot s has no value.
func (col *column) empty(s int32) bool { return int(s) >= len(col.vals) || col.vals[s] == 0 }

// minMax returns the smallest and the largest code of slot s (ok false:
// no value).
func (col *column) minMax(s int32) (lo, hi uint32, ok bool) {
	var one [1]uint32
	cs := col.codesOf(s, &one)
	if len(cs) == 0 {
		return 0, 0, false
	}
	return cs[0], cs[len(cs)-1], true
}

// hasCode reports whether slot s has the code c.
func (col *column) hasCode(s int32, c uint32) bool {
	var one [1]uint32
	_, found := slices.BinarySearch(col.codesOf(s, &one), c)
	return found
}

// code is the code of k, dict's or a pending one.
func (col *column) code(k string) uint32 {
	if c, ok := col.find(k); ok {
		return uint32(c)
	}
	if c, ok := col.pendingCode[k]; ok {
		return c
	}
	if col.pendingCode == nil {
		col.pendingCode = map[string]uint32{}
	}
	c := uint32(col.ncodes() + len(col.pending))
	col.pending = append(col.pending, k)
	col.pendingCode[k] = c
	col.pendingBytes += int64(len(k))
	return c
}

// setSlot sets the keys of slot s (sorted and distinct, as colKeys makes
// them).
func (col *column) setSlot(s int32, keys []string) {
	if n := int(s) + 1 - len(col.vals); n > 0 {
		col.vals = append(col.vals, make([]uint32, n)...)
	}
	old := col.vals[s]
	if old == 0 && len(keys) == 0 {
		return
	}
	var one [1]uint32
	col.entries += int64(len(keys) - len(col.codesOf(s, &one)))
	switch len(keys) {
	case 0:
		col.vals[s] = 0
	case 1:
		col.vals[s] = col.code(keys[0]) + 1
	default:
		// The slot's old codes stay in many until the next flush.
		col.vals[s] = multi | uint32(len(col.many))
		col.many = append(col.many, uint32(len(keys)))
		for _, k := range keys {
			col.many = append(col.many, col.code(k))
		}
	}
	col.dirty = true
}

// flush brings dict, the slots' codes and the postings up to date with
// the writes since the last flush.
func (col *column) flush() {
	if !col.dirty {
		return
	}
	nold := col.ncodes()
	counts := make([]uint32, nold+len(col.pending))
	var one [1]uint32
	nmany := 0
	for s := range col.vals {
		cs := col.codesOf(int32(s), &one)
		for _, c := range cs {
			counts[c]++
		}
		if len(cs) > 1 {
			nmany += 1 + len(cs)
		}
	}
	remap := col.renumber(counts)
	// The slots' codes, renumbered, and many without the old codes of
	// rewritten slots.
	many := make([]uint32, 0, nmany)
	for s, v := range col.vals {
		switch {
		case v == 0:
		case v&multi == 0:
			if remap != nil {
				col.vals[s] = remap[v-1] + 1
			}
		default:
			i := v &^ multi
			cs := col.many[i+1 : i+1+col.many[i]]
			col.vals[s] = multi | uint32(len(many))
			many = append(many, uint32(len(cs)))
			for _, c := range cs {
				if remap != nil {
					c = remap[c]
				}
				many = append(many, c)
			}
		}
	}
	col.many = many
	// The postings, by counting: slots in ascending order land in
	// ascending order within their code.
	n := col.ncodes()
	start := make([]uint32, n+1)
	for c, k := range counts {
		if k > 0 {
			if remap != nil {
				c = int(remap[c])
			}
			start[c+1] = k
		}
	}
	for c := range n {
		start[c+1] += start[c]
	}
	post := make([]uint32, start[n])
	next := slices.Clone(start[:n])
	for s := range col.vals {
		for _, c := range col.codesOf(int32(s), &one) {
			post[next[c]] = uint32(s)
			next[c]++
		}
	}
	col.start, col.post, col.entries = start, post, int64(len(post))
	col.pending, col.pendingCode, col.pendingBytes = nil, nil, 0
	col.dirty = false
	col.densify()
	col.ranges.reset()
}

// denseSlots is the fewest slots a column has for its codes to get
// bitsets (dense): below it a walk of the postings is as quick. A
// variable for the tests.
var denseSlots = 4096

// densify builds the bitsets of the codes a sixteenth of the slots or
// more have.
func (col *column) densify() {
	col.dense, col.sets, col.present = nil, nil, nil
	n := len(col.vals)
	if n < denseSlots {
		return
	}
	col.present = newBitset(n)
	for s, v := range col.vals {
		if v != 0 {
			col.present.set(int32(s))
		}
	}
	for c := range col.ncodes() {
		ps := col.postings(c, c+1)
		if len(ps) < n/16 {
			continue
		}
		b := newBitset(n)
		b.setEach(ps)
		col.dense, col.sets = append(col.dense, uint32(c)), append(col.sets, b)
	}
}

// denseSet is the bitset of code c's slots, nil when c is not dense.
func (col *column) denseSet(c int) bitset {
	if i, ok := slices.BinarySearch(col.dense, uint32(c)); ok {
		return col.sets[i]
	}
	return nil
}

// renumber makes dict the keys with a count (counts by code, dict's then
// the pending ones), in order, and returns each old code's new one; nil
// when dict stays as it is (nothing pending, every key still held).
func (col *column) renumber(counts []uint32) []uint32 {
	nold := col.ncodes()
	if len(col.pending) == 0 && !slices.Contains(counts, 0) {
		return nil
	}
	order := make([]uint32, len(col.pending)) // pending codes by key
	for i := range order {
		order[i] = uint32(nold + i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		return strings.Compare(col.pending[int(a)-nold], col.pending[int(b)-nold])
	})
	keyOf := func(c uint32) string {
		if int(c) < nold {
			return col.key(int(c))
		}
		return col.pending[int(c)-nold]
	}
	remap := make([]uint32, len(counts))
	var b strings.Builder
	size, n := 0, 0
	for c, k := range counts {
		if k > 0 {
			size += len(keyOf(uint32(c)))
			n++
		}
	}
	b.Grow(size)
	ends := make([]uint32, 0, n)
	add := func(c uint32) {
		if counts[c] == 0 {
			return
		}
		remap[c] = uint32(len(ends))
		b.WriteString(keyOf(c))
		ends = append(ends, uint32(b.Len()))
	}
	i, j := 0, 0 // old codes, pending codes by key (never equal: code looks in dict first)
	for i < nold || j < len(order) {
		if j == len(order) || (i < nold && col.key(i) < keyOf(order[j])) {
			add(uint32(i))
			i++
		} else {
			add(order[j])
			j++
		}
	}
	col.dict, col.ends = b.String(), ends
	return remap
}
