package bleve

import (
	"errors"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/document"
)

// splitBatchDocs is the smallest number of documents per batch when a bulk
// is written as several batches: below a few hundred documents a segment
// builds in milliseconds and more segments only cost merges.
const splitBatchDocs = 1000

// bulkWrite collects what a bulk writes to Bleve, the last write per id
// (an id written twice in one bulk must land in one batch: two batches
// would both keep a copy).
type bulkWrite struct {
	ids      []string                      // in the order first written
	docs     map[string]*document.Document // nil: deleted
	internal [][]byte                      // internal keys to delete
}

func newBulkWrite(n int) *bulkWrite {
	return &bulkWrite{ids: make([]string, 0, n), docs: make(map[string]*document.Document, n)}
}

func (w *bulkWrite) put(id string, doc *document.Document) {
	if _, ok := w.docs[id]; !ok {
		w.ids = append(w.ids, id)
	}
	w.docs[id] = doc
}

// write writes the bulk. Bleve builds a batch's segment on one core, the
// longest part of a bulk of thousands of documents, so such a bulk is
// split into up to one batch per core (at most 4, at least
// splitBatchDocs documents each), built side by side while the index's
// readers are held at the snapshot before it (held.go): they see the
// whole bulk or none of it, as with one batch. If a batch fails, the
// readers stay held until a later bulk succeeds (the events are delivered
// again and written whole), so no reader sees part of it meanwhile.
func (ix *index) write(w *bulkWrite) error {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return fmt.Errorf("bleve: batch: %w", err)
	}
	_, holder := scorchOf(adv)
	parts := min(bulkCores(), len(w.ids)/splitBatchDocs)
	if holder == nil || parts < 2 {
		err := ix.batch(w, w.ids, true)
		if err == nil && holder != nil {
			holder.release() // after a failed split bulk
		}
		return err
	}
	if err := holder.hold(); err != nil {
		return fmt.Errorf("bleve: batch: %w", err)
	}
	holder.splits.Add(1)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(w.ids)/parts, (p+1)*len(w.ids)/parts
		wg.Go(func() { errs[p] = ix.batch(w, w.ids[lo:hi], p == 0) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	holder.release()
	return nil
}

// batch writes the documents of ids as one Bleve batch, with the internal
// deletes when internal is set.
func (ix *index) batch(w *bulkWrite, ids []string, internal bool) error {
	b := ix.bi.NewBatch()
	for _, id := range ids {
		if d := w.docs[id]; d != nil {
			if err := b.IndexAdvanced(d); err != nil {
				return fmt.Errorf("bleve: index %q: %w", id, err)
			}
		} else {
			b.Delete(id)
		}
	}
	if internal {
		for _, k := range w.internal {
			b.DeleteInternal(k)
		}
	}
	if err := ix.bi.Batch(b); err != nil {
		return fmt.Errorf("bleve: batch: %w", err)
	}
	return nil
}
