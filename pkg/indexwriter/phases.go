package indexwriter

import (
	"context"
	"slices"

	"github.com/cmsplatform/cms/pkg/search"
)

// writePhased builds the documents of ids[b] on every branch b of
// branches, versioned v, Options.Batch objects per store read, and writes
// them in at most two Bulk calls per target index:
//
//  1. the branches of origin (the branches the pass's events were written
//     on), which is what their readers wait for;
//  2. the other branches, descendants that inherit the change.
//
// When the second phase holds at least Options.Batch documents, the first
// is written and refreshed (searchable on every engine) before the second
// is built, so that the readers of the written branch do not wait for the
// descendants' documents: a promote of 10,000 objects writes 10,000
// documents on the parent and 10,000 on the child, whose content is the
// same as before (it now inherits what it held). Each phase is one Bulk,
// so each branch still shows all of a pass or none of it; a descendant
// shows the state before the pass a little longer than the branch written,
// and the change-tracking version is recorded after both (commit), so
// read-your-writes (WaitForVersion) covers every branch. A smaller pass is
// one Bulk, as before.
func (ix *Indexer) writePhased(ctx context.Context, t tree, v int64, branches []int64, origin map[int64]bool,
	ids map[int64][]int64, res *ApplyResult) error {
	var first, second []int64
	size := 0
	for _, b := range branches {
		if origin[b] {
			first = append(first, b)
		} else {
			second = append(second, b)
			size += len(ids[b])
		}
	}
	build := func(bs []int64) ([]search.Op, error) {
		var ops []search.Op
		for _, b := range bs {
			for chunk := range slices.Chunk(ids[b], ix.opts.Batch) {
				built, err := ix.build(ctx, t, b, v, chunk)
				if err != nil {
					return nil, err
				}
				ops = append(ops, built...)
			}
		}
		res.Branches += len(bs)
		return ops, nil
	}
	ops, err := build(first)
	if err != nil {
		return err
	}
	if len(ops) > 0 && size >= ix.opts.Batch {
		if err := ix.write(ctx, ops, res); err != nil {
			return err
		}
		if err := ix.refresh(ctx); err != nil {
			return err
		}
		ops = nil
	}
	more, err := build(second)
	if err != nil {
		return err
	}
	return ix.write(ctx, append(ops, more...), res)
}
