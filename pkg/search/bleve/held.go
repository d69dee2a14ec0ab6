package bleve

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/registry"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// heldType is the index type of the indexes this package creates: Bleve's
// scorch whose readers can be held at one snapshot while a bulk writes
// several batches (bulk.go). A Bleve batch becomes one segment, built on
// one core; a bulk of thousands of documents (a release's parent branch)
// is written as several batches built side by side and becomes visible to
// readers at once, when the hold ends, as one batch would. An index
// created before it has scorch's own type: it is opened as such and its
// bulks stay one batch (`cms reindex` creates it anew with this type).
const heldType = "cms_scorch"

func init() {
	if err := registry.RegisterIndexType(heldType, newHeldScorch); err != nil {
		panic(err)
	}
}

// heldScorch is scorch with a reader that can be held. Every reader of the
// index, Bleve's searches included, comes from Reader.
type heldScorch struct {
	*scorch.Scorch
	mu   sync.Mutex
	held *scorch.IndexSnapshot // nil: readers get the current snapshot
	// splits counts the bulks written as several batches.
	splits atomic.Int64
}

func newHeldScorch(storeName string, config map[string]any, q *bleveindex.AnalysisQueue) (bleveindex.Index, error) {
	ix, err := scorch.NewScorch(storeName, config, q)
	if err != nil {
		return nil, err
	}
	sc, ok := ix.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("bleve: scorch is a %T", ix)
	}
	return &heldScorch{Scorch: sc}, nil
}

// Reader returns the held snapshot while there is one, else the current.
func (h *heldScorch) Reader() (bleveindex.IndexReader, error) {
	h.mu.Lock()
	if s := h.held; s != nil {
		s.AddRef()
		h.mu.Unlock()
		return s, nil
	}
	h.mu.Unlock()
	return h.Scorch.Reader()
}

// hold makes readers see the current snapshot until release; holding
// while held keeps the earlier snapshot (a bulk that failed part way
// stays hidden until one succeeds).
func (h *heldScorch) hold() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		return nil
	}
	r, err := h.Scorch.Reader()
	if err != nil {
		return err
	}
	s, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		_ = r.Close()
		return fmt.Errorf("bleve: reader is a %T", r)
	}
	h.held = s
	return nil
}

// release lets readers see the current snapshot again.
func (h *heldScorch) release() {
	h.mu.Lock()
	s := h.held
	h.held = nil
	h.mu.Unlock()
	if s != nil {
		_ = s.DecRef()
	}
}

// Close drops the held snapshot first, so that its segments can close.
func (h *heldScorch) Close() error {
	h.release()
	return h.Scorch.Close()
}

// scorchOf returns the scorch instance behind an index's Advanced(), and
// the holder when the index has one.
func scorchOf(adv bleveindex.Index) (*scorch.Scorch, *heldScorch) {
	switch s := adv.(type) {
	case *heldScorch:
		return s.Scorch, s
	case *scorch.Scorch:
		return s, nil
	}
	return nil, nil
}
