package bleve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/numeric"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bindex "github.com/blevesearch/bleve_index_api"
)

// numberShifts are the prefixes at which Long, Double and Date values are
// indexed: a value is indexed as its full 64 bits (shift 0) and without
// its last 8, 16, ... 56 bits, 8 terms where Bleve's own fields index 16
// (every 4 bits). Numbers were most of the terms of an object's document
// (id, branch, type, transaction, modification time): 8 instead of 16 cut
// the CPU time of a Bulk of 5,000 documents by a fifth
// (BenchmarkReleaseBulk). A range is split into whole terms of these
// prefixes (splitRange), up to 511 per end and shift instead of 31, which
// numberRange looks up in or reads from the index's dictionary, unscored
// when no answer depends on scores (searchBleve); the columns answer
// ranges wherever they hold the field. (A Long is indexed as the bits of a
// float64, so integers differ in the upper bits: finer steps at the low
// shifts would not help them.) Indexes written with Bleve's fields hold
// every term of these prefixes (all multiples of 4), so they answer these
// ranges as well.
var numberShifts = []uint{0, 8, 16, 24, 32, 40, 48, 56}

// steppedNumbers replaces the numeric and date fields Bleve's mapping
// made of a document by ones indexed at numberShifts.
func steppedNumbers(doc *document.Document) {
	for i, f := range doc.Fields {
		switch x := f.(type) {
		case *document.NumericField:
			doc.Fields[i] = &steppedNumber{NumericField: x}
		case *document.DateTimeField:
			doc.Fields[i] = &steppedDate{DateTimeField: x}
		}
	}
}

// steppedNumber is a Long or Double field indexed at numberShifts.
type steppedNumber struct {
	*document.NumericField
	t terms
}

func (n *steppedNumber) Analyze() {
	n.t = stepTerms(n.Value(), analysis.Numeric, n.ArrayPositions(), n.Options())
}
func (n *steppedNumber) AnalyzedLength() int                               { return n.t.length }
func (n *steppedNumber) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return n.t.freqs }

// steppedDate is a Date field indexed at numberShifts.
type steppedDate struct {
	*document.DateTimeField
	t terms
}

// dateLayoutSeparator ends the prefix-coded time in a Bleve date
// field's value when the value also carries its layout.
var dateLayoutSeparator = []byte{'\xff'}

func (n *steppedDate) Analyze() {
	v, _, _ := bytes.Cut(n.Value(), dateLayoutSeparator)
	n.t = stepTerms(v, analysis.DateTime, n.ArrayPositions(), n.Options())
}
func (n *steppedDate) AnalyzedLength() int                               { return n.t.length }
func (n *steppedDate) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return n.t.freqs }

// terms is what a stepped field's Analyze produced.
type terms struct {
	length int
	freqs  bindex.TokenFrequencies
}

// stepTerms are the terms of a prefix-coded 64-bit value at numberShifts.
func stepTerms(value []byte, typ analysis.TokenType, pos []uint64, opts bindex.FieldIndexingOptions) terms {
	v, err := numeric.PrefixCoded(value).Int64()
	if err != nil {
		v, value = 0, nil
	}
	tokens := make(analysis.TokenStream, 0, len(numberShifts))
	if value != nil {
		tokens = append(tokens, &analysis.Token{End: len(value), Term: value, Position: 1, Type: typ})
		for _, shift := range numberShifts[1:] {
			t := numeric.MustNewPrefixCodedInt64(v, shift)
			tokens = append(tokens, &analysis.Token{End: len(t), Term: t, Position: 1, Type: typ})
		}
	}
	return terms{length: len(tokens), freqs: analysis.TokenFrequency(tokens, pos, opts)}
}

// numberRange matches the documents with a value of a Long, Double or
// Date field in [lo, hi] (the sortable int64 of a number, the Unix
// nanoseconds of a time): the range split at numberShifts into the terms
// that cover it, of those the ones in the index.
type numberRange struct {
	field  string
	lo, hi int64
}

// newNumberRange is the numberRange of bounds as Bleve encodes them
// (nil: open), exclusive unless incl says otherwise.
func newNumberRange(field string, lo, hi *int64, loIncl, hiIncl bool) numberRange {
	r := numberRange{field: field, lo: math.MinInt64, hi: math.MaxInt64}
	empty := numberRange{field: field, lo: 1, hi: 0}
	if lo != nil {
		if r.lo = *lo; !loIncl {
			if r.lo == math.MaxInt64 {
				return empty
			}
			r.lo++
		}
	}
	if hi != nil {
		if r.hi = *hi; !hiIncl {
			if r.hi == math.MinInt64 {
				return empty
			}
			r.hi--
		}
	}
	return r
}

// numberKey is the int64 Bleve indexes for a Long (int64), Double
// (float64) or Date (time.Time) value: the sortable form of the float64
// for numbers, the Unix nanoseconds for times (clamped to the times
// they can hold). False for any other value and the zero time.
func numberKey(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return numeric.Float64ToInt64(float64(x)), true
	case float64:
		return numeric.Float64ToInt64(x), true
	case time.Time:
		switch {
		case x.IsZero():
			return 0, false
		case x.Before(minNanos):
			return math.MinInt64, true
		case x.After(maxNanos):
			return math.MaxInt64, true
		}
		return x.UnixNano(), true
	}
	return 0, false
}

var minNanos, maxNanos = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

func (q numberRange) Searcher(ctx context.Context, r bindex.IndexReader, _ mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	var found [][]byte
	var has bindex.FieldDictContains
	defer func() {
		if d, ok := has.(bindex.FieldDict); ok {
			_ = d.Close()
		}
	}()
	for _, s := range splitRange(q.lo, q.hi, numberShifts) {
		var err error
		if n, ok := s.count(); ok && n <= lookupTerms {
			found, has, err = q.lookup(r, has, s, n, found)
		} else {
			found, err = q.scan(r, s, found)
		}
		if err != nil {
			return nil, fmt.Errorf("bleve: range on %q: %w", q.field, err)
		}
	}
	ctx = context.WithValue(ctx, bsearch.QueryTypeKey, bsearch.Numeric)
	return searcher.NewMultiTermSearcherBytes(ctx, r, found, q.field, 1, opts, true)
}

// lookupTerms is the most terms of a span looked up one by one in the
// dictionary; a wider span is read as a range of it (a range iterator
// costs as much as a few dozen lookups).
const lookupTerms = 32

// lookup appends the terms of s (n of them) that are in the index.
func (q numberRange) lookup(r bindex.IndexReader, has bindex.FieldDictContains, s termSpan, n uint64, found [][]byte) ([][]byte, bindex.FieldDictContains, error) {
	if has == nil {
		rc, ok := r.(bindex.IndexReaderContains)
		if !ok {
			f, err := q.scan(r, s, found)
			return f, nil, err
		}
		var err error
		if has, err = rc.FieldDictContains(q.field); err != nil {
			return found, nil, err
		}
	}
	for i := range n {
		t := numeric.MustNewPrefixCodedInt64(s.lo+int64(i<<s.shift), s.shift)
		ok, err := has.Contains(t)
		if err != nil {
			return found, has, err
		}
		if ok {
			found = append(found, t)
		}
	}
	return found, has, nil
}

// scan appends the terms of s in the index, read as a dictionary range.
func (q numberRange) scan(r bindex.IndexReader, s termSpan, found [][]byte) ([][]byte, error) {
	d, err := r.FieldDictRange(q.field, numeric.MustNewPrefixCodedInt64(s.lo, s.shift), numeric.MustNewPrefixCodedInt64(s.hi, s.shift))
	if err != nil {
		return found, err
	}
	for {
		e, err := d.Next()
		if err != nil || e == nil {
			return found, errors.Join(err, d.Close())
		}
		found = append(found, []byte(e.Term))
	}
}

// termSpan is the inclusive range [lo, hi] of the terms at shift (lo has
// its lower shift bits clear, hi set).
type termSpan struct {
	lo, hi int64
	shift  uint
}

// count is the number of terms in s, if it fits in a uint64.
func (s termSpan) count() (uint64, bool) {
	n := (uint64(s.hi) - uint64(s.lo)) >> s.shift
	return n + 1, n+1 != 0
}

// splitRange splits [lo, hi] into spans of prefix-coded terms at the
// given shifts (ascending, the first 0): at each shift the ends that do
// not fill a whole term of the next shift, the middle at the last shift
// needed (Lucene's and Bleve's numeric range split, with steps of our
// own).
func splitRange(lo, hi int64, shifts []uint) []termSpan {
	var out []termSpan
	if lo > hi {
		return nil
	}
	span := func(lo, hi int64, shift uint) termSpan {
		return termSpan{lo: lo, hi: hi | (int64(1)<<shift - 1), shift: shift}
	}
	for i, shift := range shifts {
		if i == len(shifts)-1 {
			return append(out, span(lo, hi, shift))
		}
		next := shifts[i+1]
		diff := int64(1) << next
		mask := (int64(1)<<(next-shift) - 1) << shift
		hasLower, hasUpper := lo&mask != 0, hi&mask != mask
		nextLo, nextHi := lo&^mask, hi&^mask
		if hasLower {
			nextLo = (lo + diff) &^ mask
		}
		if hasUpper {
			nextHi = (hi - diff) &^ mask
		}
		if nextLo > nextHi || nextLo < lo || nextHi > hi {
			return append(out, span(lo, hi, shift))
		}
		if hasLower {
			out = append(out, span(lo, lo|mask, shift))
		}
		if hasUpper {
			out = append(out, span(hi&^mask, hi, shift))
		}
		lo, hi = nextLo, nextHi
	}
	return out
}
