package bleve

import (
	"bytes"
	"context"
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

// numberStep is the precision step (in bits) at which Long, Double and
// Date values are indexed: a value is indexed as its full 64 bits and as
// its prefixes without the last 8, 16, ... 56 bits, 8 terms where Bleve's
// own fields index 16 (step 4). Numbers were most of the terms of an
// object's document (id, branch, type, transaction, modification time):
// half as many cut the CPU time of a Bulk of 5,000 documents by a fifth
// (BenchmarkReleaseBulk, 2,026 → 1,617 ms). A range is then matched by up
// to 255 terms per step and end instead of 15 (numberRange), unscored
// when the search sorts by fields (searchBleve), and the columns answer
// it wherever they hold the field. Indexes written at step 4 hold every
// term of step 8 (its prefixes are a subset), so they answer these ranges
// as well.
const numberStep = 8

// steppedNumbers replaces the numeric and date fields Bleve's mapping
// made of a document by ones indexed at numberStep.
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

// steppedNumber is a Long or Double field indexed at numberStep.
type steppedNumber struct {
	*document.NumericField
	t terms
}

func (n *steppedNumber) Analyze() {
	n.t = stepTerms(n.Value(), analysis.Numeric, n.ArrayPositions(), n.Options())
}
func (n *steppedNumber) AnalyzedLength() int                               { return n.t.length }
func (n *steppedNumber) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return n.t.freqs }

// steppedDate is a Date field indexed at numberStep.
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

// stepTerms are the terms of a prefix-coded 64-bit value at numberStep.
func stepTerms(value []byte, typ analysis.TokenType, pos []uint64, opts bindex.FieldIndexingOptions) terms {
	v, err := numeric.PrefixCoded(value).Int64()
	if err != nil {
		v, value = 0, nil
	}
	tokens := make(analysis.TokenStream, 0, 64/numberStep)
	if value != nil {
		tokens = append(tokens, &analysis.Token{End: len(value), Term: value, Position: 1, Type: typ})
		for shift := uint(numberStep); shift < 64; shift += numberStep {
			t := numeric.MustNewPrefixCodedInt64(v, shift)
			tokens = append(tokens, &analysis.Token{End: len(t), Term: t, Position: 1, Type: typ})
		}
	}
	return terms{length: len(tokens), freqs: analysis.TokenFrequency(tokens, pos, opts)}
}

// numberRange matches the documents with a value of a Long, Double or
// Date field in [lo, hi] (the sortable int64 of a number, the Unix
// nanoseconds of a time): the range split at numberStep into the terms
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
	for _, s := range splitRange(q.lo, q.hi, numberStep) {
		d, err := r.FieldDictRange(q.field, s.from, s.to)
		if err != nil {
			return nil, fmt.Errorf("bleve: range on %q: %w", q.field, err)
		}
		for {
			e, err := d.Next()
			if err != nil {
				_ = d.Close()
				return nil, fmt.Errorf("bleve: range on %q: %w", q.field, err)
			}
			if e == nil {
				break
			}
			found = append(found, []byte(e.Term))
		}
		if err := d.Close(); err != nil {
			return nil, fmt.Errorf("bleve: range on %q: %w", q.field, err)
		}
	}
	ctx = context.WithValue(ctx, bsearch.QueryTypeKey, bsearch.Numeric)
	return searcher.NewMultiTermSearcherBytes(ctx, r, found, q.field, 1, opts, true)
}

// termSpan is an inclusive range of the terms of one shift.
type termSpan struct{ from, to []byte }

// splitRange splits [lo, hi] into spans of prefix-coded terms at shifts
// that are multiples of step: at each shift the ends that do not fill a
// whole term of the next shift, the middle at the last shift (as Lucene's
// and Bleve's numeric range split, at a step of our own).
func splitRange(lo, hi int64, step uint) []termSpan {
	var out []termSpan
	if lo > hi {
		return nil
	}
	span := func(lo, hi int64, shift uint) termSpan {
		hi |= int64(1)<<shift - 1
		return termSpan{numeric.MustNewPrefixCodedInt64(lo, shift), numeric.MustNewPrefixCodedInt64(hi, shift)}
	}
	for shift := uint(0); ; shift += step {
		diff := int64(1) << (shift + step)
		mask := (int64(1)<<step - 1) << shift
		hasLower, hasUpper := lo&mask != 0, hi&mask != mask
		nextLo, nextHi := lo&^mask, hi&^mask
		if hasLower {
			nextLo = (lo + diff) &^ mask
		}
		if hasUpper {
			nextHi = (hi - diff) &^ mask
		}
		if shift+step >= 64 || nextLo > nextHi || nextLo < lo || nextHi > hi {
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
}
