package indexwriter

import (
	"context"
	"errors"
	"slices"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
)

// ApplyBatch brings the index up to date with evs, consecutive change
// events in stream order, as one pass: it loads the branch tree once,
// builds every object the plain events list once per branch it reaches
// (repeated changes of one object coalesce), with set-based store reads
// and one engine bulk per target index (in chunks of Options.Batch),
// refreshes once and records the highest transaction of evs as the
// change-tracking version once.
//
// Documents are always built from the store's current state, so one build
// versioned with the batch's highest transaction is what applying the
// events one by one would leave behind: a replay of any of them is stale
// afterwards, and a tombstone keeps a deleted object deleted. Events that
// need more than rebuilding their objects (comments, a branch created or
// deleted, a change of a language object, whose fallbacks are compared
// with the indexed state first) go through Apply's code path in order,
// versioned with their own transaction, before the coalesced objects are
// written.
//
// Nothing is recorded on error: the caller may retry the batch or apply
// its events one by one (Apply) to find the failing one. Like Apply, it
// should be called by one in-order consumer.
func (ix *Indexer) ApplyBatch(ctx context.Context, evs []changes.Event) (ApplyResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := ix.applyBatch(ctx, evs)
		if !errors.Is(err, errLanguagesChanged) || attempt == 3 {
			return res, err
		}
		ix.log.Info("language objects changed while applying a batch: starting over",
			"events", len(evs), "err", err)
	}
}

func (ix *Indexer) applyBatch(ctx context.Context, evs []changes.Event) (ApplyResult, error) {
	var res ApplyResult
	if len(evs) == 0 {
		return res, nil
	}
	ctx, t, err := ix.begin(ctx)
	if err != nil {
		return res, err
	}
	var v int64
	objects := newCoalesced()
	// Objects changed (not created) per event branch: a type among them
	// whose display-name attribute changed rebuilds the type's objects
	// (refreshTypeNames, displayname.go).
	changed := map[int64][]int64{}
	var changedBranches []int64
	for _, ev := range evs {
		v = max(v, ev.Transaction)
		if ix.rebuildsObjectsOnly(ctx, t, ev) {
			objects.add(t.Subtree(ev.Branch), ev.ObjectIDs)
			if ev.Kind != changes.KindCreated {
				if _, ok := changed[ev.Branch]; !ok {
					changedBranches = append(changedBranches, ev.Branch)
				}
				changed[ev.Branch] = append(changed[ev.Branch], ev.ObjectIDs...)
			}
			continue
		}
		if err := ix.applyEvent(ctx, t, ev, &res); err != nil {
			return res, err
		}
	}
	for _, b := range changedBranches {
		ids := dedup(changed[b])
		if err := ix.refreshTypeNames(ctx, t, b, changes.KindUpdated, ids, t.Subtree(b), v, &res); err != nil {
			return res, err
		}
	}
	if err := ix.writeCoalesced(ctx, t, objects, v, &res); err != nil {
		return res, err
	}
	if err := ix.commit(ctx, v); err != nil {
		return res, err
	}
	ix.log.Debug("applied changes", "events", len(evs), "tx", v, "objects", objects.size,
		"ops", res.Ops, "stale", res.Stale)
	return res, nil
}

// rebuildsObjectsOnly reports whether applying ev is rebuilding its
// objects on the branches it reaches and nothing else, so that it can be
// coalesced with other such events.
func (ix *Indexer) rebuildsObjectsOnly(ctx context.Context, t tree, ev changes.Event) bool {
	if ev.Kind == changes.KindComment || ev.Kind == changes.KindBranchDeleted {
		return false
	}
	for _, id := range ev.ObjectIDs {
		newBranch := ev.Kind == changes.KindCreated && ev.Branch == content.BranchDefault && t.Has(id)
		// isLanguage says true when the languages cannot be read:
		// Apply's path then reports the error.
		if newBranch || ix.isLanguage(ctx, t, id) {
			return false
		}
	}
	return true
}

// coalesced is the objects to rebuild per branch, each once.
type coalesced struct {
	branches []int64                  // in order of first appearance
	ids      map[int64]map[int64]bool // branch → object ids
	origin   map[int64]bool           // branches some event was on (phases.go)
	size     int                      // (branch, object) pairs
}

func newCoalesced() *coalesced {
	return &coalesced{ids: map[int64]map[int64]bool{}, origin: map[int64]bool{}}
}

// add records objects ids on every branch of targets, the subtree of the
// event's branch (targets[0]).
func (c *coalesced) add(targets, ids []int64) {
	if len(targets) > 0 {
		c.origin[targets[0]] = true
	}
	for _, b := range targets {
		set := c.ids[b]
		if set == nil {
			set = map[int64]bool{}
			c.ids[b] = set
			c.branches = append(c.branches, b)
		}
		for _, id := range ids {
			if !set[id] {
				set[id] = true
				c.size++
			}
		}
	}
}

// writeCoalesced builds the objects of c on their branches, versioned v,
// Options.Batch objects per store read, and writes them branch by branch in
// phases (phases.go).
func (ix *Indexer) writeCoalesced(ctx context.Context, t tree, c *coalesced, v int64, res *ApplyResult) error {
	ids := make(map[int64][]int64, len(c.branches))
	for _, b := range c.branches {
		on := make([]int64, 0, len(c.ids[b]))
		for id := range c.ids[b] {
			on = append(on, id)
		}
		slices.Sort(on)
		ids[b] = on
	}
	return ix.writePhased(ctx, t, v, c.branches, c.origin, ids, res)
}
