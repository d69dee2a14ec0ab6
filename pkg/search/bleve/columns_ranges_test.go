package bleve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The range index answers a span of codes as marking the span's postings
// does: a column of 6,000 slots with one value each (some without, a few
// with two) over a few hundred keys of skewed frequencies, rewritten
// between rounds, random spans of every width.
func TestRangeIndexMatchesPostings(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	col := &column{}
	const slots = 6000
	used := 0
	for round := range 6 {
		for range 3000 {
			s := int32(r.IntN(slots))
			if r.IntN(10) == 0 {
				col.setSlot(s, nil)
				continue
			}
			k := r.IntN(400)
			if r.IntN(3) == 0 {
				k = r.IntN(8) // a few frequent keys
			}
			keys := []string{fmt.Sprintf("%04d", k)}
			if r.IntN(300) == 0 { // a few slots with two values
				keys = append(keys, fmt.Sprintf("%04d", 400+r.IntN(50)))
			}
			col.setSlot(s, keys)
		}
		col.flush()
		if !rangeIndexed(col) {
			t.Fatalf("round %d: %d slots, %d codes: no range index", round, len(col.vals), col.ncodes())
		}
		idx := col.rangeIndexOf()
		if col.rangeIndexOf() != idx || len(idx.codes) < rangeSteps/2 || len(idx.multi) == 0 {
			t.Fatalf("round %d: range index %v", round, idx.codes)
		}
		for range 300 {
			a := r.IntN(col.ncodes() + 1)
			b := a + r.IntN(col.ncodes()+1-a)
			n := slots + r.IntN(100)
			got, ok := idx.span(col, a, b, n, len(col.post)+n)
			if !ok {
				continue
			}
			used++
			want := newBitset(n)
			for _, s := range col.postings(a, b) {
				want.set(int32(s))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: span [%d, %d) of %d codes: %d slots, want %d", round, a, b, col.ncodes(), got.count(), want.count())
			}
		}
		if col.ranges.bytes() == 0 || col.bytes() < col.ranges.bytes() {
			t.Fatalf("round %d: range index of %d bytes, column %d", round, col.ranges.bytes(), col.bytes())
		}
	}
	if used < 500 {
		t.Fatalf("only %d spans answered from the range index", used)
	}
	// With more than one slot in 64 holding several values, it declines.
	for s := range int32(200) {
		col.setSlot(s, []string{"0001", "0002"})
	}
	col.flush()
	if _, ok := col.rangeIndexOf().span(col, 0, col.ncodes(), slots, len(col.post)+slots); ok {
		t.Fatal("a range index over a column of many multi-valued slots")
	}
}
