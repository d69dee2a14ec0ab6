package bleve

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/blevesearch/bleve/v2/document"

	"github.com/cmsplatform/cms/pkg/search"
)

// prepareParallel is the number of ops from which prepare works on
// several cores.
const prepareParallel = 256

// bulkCores is how many cores one Bulk works on at most (preparing its
// documents, building its batches): up to four.
func bulkCores() int { return min(runtime.GOMAXPROCS(0), 4) }

// prepare validates ops and, for each upsert, builds what Bleve indexes
// (toBleve) and maps it to a Bleve document (the mapping step of
// Batch.Index), outside the index's write lock and, for a large Bulk, on
// up to four cores: for a Bulk of 5,000 documents this was a tenth of the
// time, on one core under the lock. docs[i] and mapped[i] are op i's (nil
// for a delete). The error is the one of the first failing op.
func (ix *index) prepare(ops []search.Op) (docs []map[string]any, mapped []*document.Document, err error) {
	docs, mapped = make([]map[string]any, len(ops)), make([]*document.Document, len(ops))
	errs := make([]error, len(ops))
	one := func(i int) {
		op := ops[i]
		switch op.Type {
		case search.OpUpsert:
			d, err := ix.toBleve(op.Doc)
			if err != nil {
				errs[i] = err
				return
			}
			doc := document.NewDocument(op.Doc.ID)
			if err := ix.bi.Mapping().MapDocument(doc, d); err != nil {
				errs[i] = fmt.Errorf("bleve: index %q: %w", op.Doc.ID, err)
				return
			}
			steppedNumbers(doc)
			docs[i], mapped[i] = d, doc
		case search.OpDelete:
			if op.Doc.ID == "" || op.Doc.Version < 1 {
				errs[i] = fmt.Errorf("%w: delete needs an id and a version >= 1", search.ErrInvalidDocument)
			}
		default:
			errs[i] = fmt.Errorf("%w: unknown op type %d", search.ErrInvalidDocument, op.Type)
		}
	}
	workers := bulkCores()
	if len(ops) < prepareParallel || workers < 2 {
		for i := range ops {
			if one(i); errs[i] != nil {
				return nil, nil, errs[i]
			}
		}
		return docs, mapped, nil
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ops); i += workers {
				one(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return docs, mapped, nil
}
