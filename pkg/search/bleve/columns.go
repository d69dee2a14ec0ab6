package bleve

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The column index answers structured searches without Bleve: a query
// without full text (no Match, no Prefix on a text field), sorted by
// fields (not by score), without aggregations. Bleve visits every match
// to sort and page, so a page of a list matching 10,000 documents cost
// tens of milliseconds; here a page costs about the page.
//
// It keeps, for the fields queries have used so far, the values of every
// document slot as order-preserving byte keys (colKey), dictionary-encoded
// (columns_layout.go): per field the distinct keys in order, per slot the
// codes (ranks) of its keys, and per code the slots that have it (the
// postings, in code order). A Term, Terms, Range or keyword Prefix is a
// binary search in the keys, marking the slots of a span of postings in a
// bitset; And, Or and Not combine bitsets; Exists reads the field "@f"
// that lists the fields a document has (as Bleve does); the total is the
// bitset's population count. Sorting walks the first sort field's
// postings from the first code (ascending) or the last (descending): the
// first time a matching slot is met its key is its minimum (or maximum),
// which is how Bleve orders multi-valued fields, and the walk stops once
// the page is complete. Slots with equal first keys are ordered by the
// other sort fields, then by document id; slots without the field come
// last. Paging past the end walks at most every posting once.
//
// Columns are built on first use by reading every document (once per new
// field) and maintained by Bulk, under the index's write lock: changed
// slots get their new codes, and the next search renumbers the codes and
// rebuilds the postings (one linear pass, however many documents changed).
//
// Their memory is bounded by a byte budget per index (WithColumnBudget;
// columns_budget.go, columns_shed.go): an estimate of what the columns
// hold is kept as they change, and an index whose columns outgrow the
// budget frees columns one field at a time, least recently used first, so
// that the searches over the fields still held stay on the columns and
// only those needing a freed field go to Bleve; a freed field's column is
// built again by the first search needing it once it fits. Only when the
// slots alone outgrow the budget is everything freed and Bleve answers
// every search, until the index shrinks back. Either way it is said once
// in the log (WARN) and in Engine.ColumnStats.

const (
	colPresent = fieldPresent // the fields a document has (Exists)
	colID      = "@id"        // the document id (default order, ties)
)

// columns is the column index of one index.
type columns struct {
	budget budget

	mu     sync.RWMutex
	off    bool     // over the budget or turned off: searches use Bleve
	built  bool     // slots and ids are loaded
	slots  idTable  // document id → slot
	ids    []string // slot → document id ("" = free)
	free   []int32
	live   bitset
	fields map[string]*column
	// idBytes is the length of the ids of the slots taken.
	idBytes int64
	// over: turned off because the columns outgrew the budget (perDoc is
	// their estimated bytes per document then); warned: the WARN line
	// was logged.
	over, warned bool
	perDoc       int64
	// freed are the fields whose columns were freed for the budget, with
	// their estimated bytes per document then (columns_shed.go);
	// warnedFields those a WARN line named. clock orders the columns'
	// last use (column.used).
	freed        map[string]int64
	warnedFields map[string]bool
	clock        atomic.Int64
}

func newColumns(b budget) *columns {
	return &columns{budget: b, off: b.bytes <= 0}
}

// bitset is a set of slots.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i int32) bool { return int(i>>6) < len(b) && b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) clear(i int32) {
	if int(i>>6) < len(b) {
		b[i>>6] &^= 1 << (uint(i) & 63)
	}
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// andCount is the number of slots both b and o have.
func (b bitset) andCount(o bitset) int {
	n := 0
	for i, w := range b[:min(len(b), len(o))] {
		n += bits.OnesCount64(w & o[i])
	}
	return n
}

func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// or adds o's slots to b (o may be shorter).
func (b bitset) or(o bitset) {
	for i := range min(len(b), len(o)) {
		b[i] |= o[i]
	}
}

// andNot removes o's slots from b (o may be shorter).
func (b bitset) andNot(o bitset) {
	for i := range min(len(b), len(o)) {
		b[i] &^= o[i]
	}
}

// setEach adds the slots of a code span's postings to b.
func (b bitset) setEach(slots []uint32) {
	for _, s := range slots {
		b.set(int32(s))
	}
}

// grow makes b hold slot i.
func (b *bitset) grow(i int32) {
	for int(i>>6) >= len(*b) {
		*b = append(*b, 0)
	}
}

// colKey is the order-preserving byte key of a normalised value: keywords
// as they are, numbers as float64 (as Bleve keeps them) and dates as Unix
// nanoseconds in 8 bytes whose byte order is the value order, booleans "F"
// and "T" (Bleve's terms).
func colKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return floatKey(float64(x)), true
	case float64:
		return floatKey(x), true
	case bool:
		if x {
			return "T", true
		}
		return "F", true
	case time.Time:
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(x.UnixNano())^(1<<63))
		return string(b[:]), true
	}
	return "", false
}

func floatKey(f float64) string {
	u := math.Float64bits(f)
	if u>>63 == 1 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], u)
	return string(b[:])
}

// colKeys are the sorted, distinct keys of a field's value (one or many).
func colKeys(v any) []string {
	var out []string
	add := func(e any) {
		if k, ok := colKey(e); ok {
			out = append(out, k)
		}
	}
	if vals, ok := v.([]any); ok {
		for _, e := range vals {
			add(e)
		}
	} else if vals, ok := v.([]string); ok {
		out = append(out, vals...)
	} else {
		add(v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// docFields is what the column index reads of one document: its
// normalised fields without the internal ones ('@…') and Stored fields.
type docFields map[string]any

// value returns the keys of field name in d (colPresent: the names of
// the fields d has).
func (d docFields) value(name string) []string {
	if name == colPresent {
		out := make([]string, 0, len(d))
		for n := range d {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	v, ok := d[name]
	if !ok {
		return nil
	}
	return colKeys(v)
}

// slot returns the slot of id, taking a free one for a new id.
func (c *columns) slot(id string) int32 {
	if s, ok := c.slots.get(c.ids, id); ok {
		return s
	}
	var s int32
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free = c.free[:n-1]
		c.ids[s] = id
	} else {
		s = int32(len(c.ids))
		c.ids = append(c.ids, id)
	}
	c.slots.add(c.ids, s)
	c.idBytes += int64(len(id))
	c.live.grow(s)
	c.live.set(s)
	return s
}

// put records the fields of document id (nil: deleted). The caller holds
// c.mu for writing.
func (c *columns) put(id string, d docFields) {
	if d == nil {
		s, ok := c.slots.get(c.ids, id)
		if !ok {
			return
		}
		c.slots.remove(c.ids, id)
		c.idBytes -= int64(len(id))
		c.ids[s] = ""
		c.free = append(c.free, s)
		c.live.clear(s)
		for _, col := range c.fields {
			col.setSlot(s, nil)
		}
		return
	}
	s := c.slot(id)
	for name, col := range c.fields {
		if name == colID {
			col.setSlot(s, []string{id})
			continue
		}
		col.setSlot(s, d.value(name))
	}
}
