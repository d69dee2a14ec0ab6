package bleve

import (
	"context"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// Updating a document deletes its old copy, which stays in its segment
// until a merge rewrites that segment. Bleve's merge policy merges by
// segment count only: a large segment whose documents were mostly
// updated since is left alone while the index has few segments, so under
// steady single-object updates the folder kept growing to 2x or more of
// the live data. An on-disk index is therefore compacted (all segments
// merged into one, in the background) once deleted copies make up more
// than compactDeletedRatio of its documents, which bounds it to about
// 1/(1-compactDeletedRatio) of its live size between compactions.
const (
	compactDeletedRatio = 0.25
	// compactMinDeleted keeps small indexes (a few documents updated
	// often) from being rewritten on every write; Bleve's own merges
	// drop their fully deleted segments.
	compactMinDeleted = 1000
)

// maybeCompact starts a background compaction of an on-disk index when
// its deleted documents exceed the bounds above and none is running.
func (ix *index) maybeCompact() {
	if !ix.onDisk || ix.compacting.Load() {
		return
	}
	sc, full, live := ix.segmentCounts()
	deleted := full - live
	if sc == nil || deleted < compactMinDeleted || float64(deleted) <= compactDeletedRatio*float64(full) {
		return
	}
	if !ix.compacting.CompareAndSwap(false, true) {
		return
	}
	ix.bg.Add(1)
	go func() {
		defer ix.bg.Done()
		defer ix.compacting.Store(false)
		// Returns when the merge is done or the index closed; an error
		// (a merge already running) only postpones the compaction to a
		// later write.
		opts := mergeplan.SingleSegmentMergePlanOptions
		_ = sc.ForceMerge(context.Background(), &opts)
	}()
}

// segmentCounts returns the index's scorch instance and the number of
// documents in its segments, all and live (not deleted); sc is nil when
// they cannot be read.
func (ix *index) segmentCounts() (sc *scorch.Scorch, full, live int64) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, 0, 0
	}
	sc, _ = scorchOf(adv)
	if sc == nil {
		return nil, 0, 0
	}
	r, err := sc.Reader()
	if err != nil {
		return nil, 0, 0
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, 0, 0
	}
	for _, s := range snap.Segments() {
		full += s.FullSize()
		live += s.LiveSize()
	}
	return sc, full, live
}
