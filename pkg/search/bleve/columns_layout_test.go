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
