package bleve

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/cmsplatform/cms/pkg/search"
)

// page returns the slots of m at [from, from+size) in the order of sort
// (then document id).
//
// A document without the sort field sorts as Bleve's does: last when
// ascending; when descending as the key "\x00", so after every key but
// the empty keyword.
func (c *columns) page(m bitset, sort []search.SortField, from, size int) []int32 {
	need := from + size
	if size == 0 {
		return nil
	}
	if n := m.count(); n <= smallMatches {
		// Few matches: sort them, rather than walk the sort column for them.
		slots := make([]int32, 0, n)
		for w, word := range m {
			for word != 0 {
				slots = append(slots, int32(w*64+bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		slices.SortFunc(slots, c.tieOrder(sort))
		if from >= len(slots) {
			return nil
		}
		return slots[from:min(need, len(slots))]
	}
	primary, desc := c.fields[colID], false
	rest := sort
	if len(sort) > 0 {
		primary, desc, rest = c.fields[sort[0].Field], sort[0].Desc, sort[1:]
	}
	cmp := c.tieOrder(rest)
	seen := newBitset(len(c.ids))
	var out, group []int32
	done := func() {
		slices.SortFunc(group, cmp)
		out = append(out, group...)
		group = group[:0]
	}
	missingDone := false
	missing := func() {
		missingDone = true
		for i, w := range m {
			for w != 0 {
				s := int32(i*64 + bits.TrailingZeros64(w))
				w &= w - 1
				if primary.empty(s) {
					group = append(group, s)
				}
			}
		}
		done()
	}
	// emptyKey is the code of the empty key, if primary has it (it is
	// the first): descending, the documents without the field come
	// before it.
	emptyKey := -1
	if primary.ncodes() > 0 && primary.key(0) == "" {
		emptyKey = 0
	}
	// walk takes the slots of code k that m has and no earlier code had;
	// false once the page is complete.
	walk := func(k int) bool {
		if len(group) > 0 {
			if done(); len(out) >= need {
				return false
			}
		}
		if desc && k == emptyKey && !missingDone {
			if missing(); len(out) >= need {
				return false
			}
		}
		for _, s := range primary.postings(k, k+1) {
			if m.has(int32(s)) && !seen.has(int32(s)) {
				seen.set(int32(s))
				group = append(group, int32(s))
			}
		}
		return true
	}
	if desc {
		for k := primary.ncodes() - 1; k >= 0 && walk(k); k-- {
		}
	} else {
		for k := 0; k < primary.ncodes() && walk(k); k++ {
		}
	}
	if len(out) < need {
		done()
	}
	if len(out) < need && !missingDone {
		missing()
	}
	if from >= len(out) {
		return nil
	}
	return out[from:min(need, len(out))]
}

// tieOrder compares slots by the sort fields rest, then by document id:
// a slot's key is its minimum (ascending) or maximum (descending); one
// without the field sorts as in page. Keys compare as their codes do;
// the rank of a key is twice its code plus one, so that "\x00" (a
// missing value, descending) can rank between two codes.
func (c *columns) tieOrder(rest []search.SortField) func(a, b int32) int {
	cols := make([]*column, len(rest))
	nul := make([]uint32, len(rest)) // the rank of "\x00"
	for i, s := range rest {
		cols[i] = c.fields[s.Field]
		k, found := cols[i].find("\x00")
		nul[i] = 2 * uint32(k)
		if found {
			nul[i]++
		}
	}
	rank := func(i int, s int32) (uint32, bool) {
		lo, hi, ok := cols[i].minMax(s)
		switch {
		case !ok:
			return nul[i], !rest[i].Desc // missing: last ascending, "\x00" descending
		case rest[i].Desc:
			return 2*hi + 1, false
		}
		return 2*lo + 1, false
	}
	ids := c.fields[colID]
	return func(a, b int32) int {
		for i := range cols {
			ka, lastA := rank(i, a)
			kb, lastB := rank(i, b)
			switch {
			case lastA && lastB:
				continue
			case lastA:
				return 1
			case lastB:
				return -1
			}
			if ka != kb {
				r := cmp.Compare(ka, kb)
				if rest[i].Desc {
					r = -r
				}
				return r
			}
		}
		return cmp.Compare(ids.vals[a], ids.vals[b]) // one code each, in id order
	}
}
