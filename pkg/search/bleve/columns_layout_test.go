package bleve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// One column, written at random (new keys, keys no slot keeps, slots
// emptied and set again, one and many values, "" and "\x00" among the
// keys) and flushed now and then, holds after every flush what a plain
// map of slots to keys holds: its keys in order, each held by a slot, the
// codes of every slot, the postings of every code, many without the
// codes of rewritten slots, lookups as a linear scan finds them, and an
// estimate that the flush did not exceed.
func TestColumnLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	words := []string{"", "\x00", "a", "a\x00", "ab", "abc", "b", "ba", "Ä", "z"}
	key := func() string {
		if r.IntN(3) == 0 { // many keys that come and go
			return fmt.Sprintf("k%03d", r.IntN(300))
		}
		return words[r.IntN(len(words))]
	}
	col := &column{}
	model := map[int32][]string{}
	for round := range 300 {
		for range 1 + r.IntN(40) {
			s := int32(r.IntN(120))
			var keys []string
			for range []int{0, 1, 1, 2, 3, 6}[r.IntN(6)] {
				keys = append(keys, key())
			}
			slices.Sort(keys)
			keys = slices.Compact(keys)
			col.setSlot(s, keys)
			model[s] = keys
		}
		before := col.bytes()
		col.flush()
		if after := col.bytes(); after > before {
			t.Fatalf("round %d: %d bytes estimated before the flush, %d after", round, before, after)
		}
		checkColumn(t, round, col, model, r)
	}
}

func checkColumn(t *testing.T, round int, col *column, model map[int32][]string, r *rand.Rand) {
	t.Helper()
	held := map[string][]uint32{} // key → slots, ascending
	nmany := 0
	for s := range int32(len(col.vals)) {
		var one [1]uint32
		var got []string
		for _, c := range col.codesOf(s, &one) {
			got = append(got, col.key(int(c)))
		}
		if want := model[s]; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("round %d: slot %d has %q, want %q", round, s, got, want)
		}
		for _, k := range model[s] {
			held[k] = append(held[k], uint32(s))
		}
		if n := len(model[s]); n > 1 {
			nmany += 1 + n
		}
		if col.empty(s) != (len(model[s]) == 0) {
			t.Fatalf("round %d: slot %d empty %v, has %q", round, s, col.empty(s), model[s])
		}
	}
	if len(col.many) != nmany || col.entries != int64(len(col.post)) {
		t.Fatalf("round %d: many %d (want %d), entries %d of %d postings", round, len(col.many), nmany, col.entries, len(col.post))
	}
	keys := make([]string, 0, len(held))
	for k := range held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if col.ncodes() != len(keys) || len(col.dict) != len(strings.Join(keys, "")) {
		t.Fatalf("round %d: %d keys (%d bytes), want %d", round, col.ncodes(), len(col.dict), len(keys))
	}
	for c, k := range keys {
		if col.key(c) != k || !slices.Equal(col.postings(c, c+1), held[k]) {
			t.Fatalf("round %d: code %d is %q with slots %v, want %q with %v", round, c, col.key(c), col.postings(c, c+1), k, held[k])
		}
	}
	if w := 4*int64(len(col.vals)+len(col.many)+len(col.ends)+len(col.start)+len(col.post)) + int64(len(col.dict)); col.bytes() < w {
		t.Fatalf("round %d: estimated %d bytes, holds %d", round, col.bytes(), w)
	}
	for range 20 {
		p := fmt.Sprintf("k%d", r.IntN(4))
		if r.IntN(2) == 0 {
			p = []string{"", "\x00", "a", "b", "k", "zz", "Ä"}[r.IntN(7)]
		}
		lower, strict, end := len(keys), len(keys), len(keys)
		for c := len(keys) - 1; c >= 0; c-- {
			if keys[c] >= p {
				lower = c
			}
			if keys[c] > p {
				strict = c
			}
		}
		for c := lower; c < len(keys); c++ {
			if !strings.HasPrefix(keys[c], p) {
				end = c
				break
			}
		}
		c, found := col.find(p)
		if col.lower(p, false) != lower || col.lower(p, true) != strict || col.prefixEnd(lower, p) != end ||
			found != slices.Contains(keys, p) || (found && c != lower) {
			t.Fatalf("round %d: %q: lower %d/%d, strict %d/%d, prefix end %d/%d, find %d %v",
				round, p, col.lower(p, false), lower, col.lower(p, true), strict, col.prefixEnd(lower, p), end, c, found)
		}
	}
}

// Spans of a column are the slots that have a key in them, whether marked
// one by one or taken as every document but those of the other keys (a
// column of one value per document, a span of most of them), through
// writes, deletes, and documents without the field now and then.
func TestColumnsMarkSpan(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 1))
	c := newColumns(budget{bytes: 1 << 30})
	c.fields, c.built = map[string]*column{"n": {}}, true
	model := map[string]int64{} // id → value (absent: no document or no value)
	docs := map[string]bool{}
	dense := 0
	for round := range 400 {
		for range 1 + r.IntN(10) {
			id := fmt.Sprint(r.IntN(60))
			switch x := r.IntN(20); {
			case x == 0:
				c.put(id, nil)
				delete(model, id)
				delete(docs, id)
			case x == 1 && round%3 == 0:
				c.put(id, docFields{})
				delete(model, id)
				docs[id] = true
			default:
				v := int64(r.IntN(4))
				if r.IntN(4) > 0 {
					v = 0 // most documents in one span
				}
				c.put(id, docFields{"n": v})
				model[id], docs[id] = v, true
			}
		}
		col := c.fields["n"]
		col.flush()
		if len(model) == len(docs) {
			dense++
		}
		for lo := range int64(5) {
			for hi := lo; hi < 5; hi++ {
				got := c.spanOpen(col, floatKey(float64(lo)), true, false, floatKey(float64(hi)), true, false)
				for id := range docs {
					s, _ := c.slots.get(c.ids, id)
					v, ok := model[id]
					if want := ok && v >= lo && v <= hi; got.has(s) != want {
						t.Fatalf("round %d: [%d, %d] has %s (value %d %v): %v", round, lo, hi, id, v, ok, got.has(s))
					}
				}
				if n, want := got.count(), countIn(model, lo, hi); n != want {
					t.Fatalf("round %d: [%d, %d] holds %d slots, want %d", round, lo, hi, n, want)
				}
			}
		}
	}
	if dense < 100 || dense == 400 {
		t.Fatalf("%d of 400 rounds with a value in every document", dense)
	}
}

func countIn(model map[string]int64, lo, hi int64) int {
	n := 0
	for _, v := range model {
		if v >= lo && v <= hi {
			n++
		}
	}
	return n
}
