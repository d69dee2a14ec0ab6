package bleve

import zapx "github.com/blevesearch/zapx/v17"

// Bleve's segment format (zapx) sizes the buffer of every new segment as
// (documents in the batch + NewSegmentBufferNumResultsBump) times the
// average document size of the previous segment, a process-wide estimate.
// With the default bump of 100, one large document (a value of several
// MB) made every following batch, even the one-document version record,
// allocate 101 times its size, again on every event: ~500x the value in
// total, the heap growth behind issue "one large value takes the instance
// down". Without the bump the estimate is proportional to the batch.
func init() {
	zapx.NewSegmentBufferNumResultsBump = 0
}
