package indexwriter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// ApplyResult counts what Apply wrote.
type ApplyResult struct {
	Branches int // branches whose documents were rebuilt
	Ops      int // ops sent to the engine
	Applied  int // ops that changed the index
	Stale    int // ops ignored because a newer version was stored
}

// Apply brings the index up to date with one change event: it rebuilds the
// listed objects on the event's branch and on every descendant branch
// (which inherit them), indexes every visible object of a newly created
// branch, removes the documents of a deleted branch, refreshes the index
// and records ev.Transaction as the change-tracking version. It is
// idempotent: applying an event again, or an older one after a newer,
// changes nothing (documents are built from the current state and
// versioned with ev.Transaction). An error leaves the version unrecorded,
// so the caller retries.
func (ix *Indexer) Apply(ctx context.Context, ev changes.Event) (ApplyResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := ix.apply(ctx, ev)
		// A language changed while the event was applied (fallback.go):
		// start over with the new state, which rebuilds what it affects.
		if !errors.Is(err, errLanguagesChanged) || attempt == 3 {
			return res, err
		}
		ix.log.Info("language objects changed while applying: starting over", "tx", ev.Transaction, "err", err)
	}
}

func (ix *Indexer) apply(ctx context.Context, ev changes.Event) (ApplyResult, error) {
	var res ApplyResult
	ctx, t, err := ix.begin(ctx)
	if err != nil {
		return res, err
	}
	if err := ix.applyEvent(ctx, t, ev, &res); err != nil {
		return res, err
	}
	if err := ix.commit(ctx, ev.Transaction); err != nil {
		return res, err
	}
	ix.log.Debug("applied change", "tx", ev.Transaction, "branch", ev.Branch, "kind", ev.Kind,
		"objects", len(ev.ObjectIDs), "ops", res.Ops, "stale", res.Stale)
	return res, nil
}

// begin prepares a pass over one or more events: it makes sure the indexes
// exist, adds the index a running `cms reindex` builds to the write targets
// of ctx (the marker is read after the events' commits) and loads the
// branch tree (strict about language changes, see errLanguagesChanged).
func (ix *Indexer) begin(ctx context.Context) (context.Context, tree, error) {
	if err := ix.EnsureIndexes(ctx); err != nil {
		return ctx, tree{}, err
	}
	ctx, err := ix.withReindexTarget(ctx)
	if err != nil {
		return ctx, tree{}, err
	}
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return ctx, tree{}, err
	}
	t.langs.strict = true
	return ctx, t, nil
}

// commit ends a pass: it refreshes the write targets and records v as the
// change-tracking version, so the pass's writes are searchable before any
// waiter for v returns.
func (ix *Indexer) commit(ctx context.Context, v int64) error {
	if err := ix.refresh(ctx); err != nil {
		return err
	}
	return ix.recordVersion(ctx, v)
}

// applyEvent writes what ev changes, versioned ev.Transaction, without
// refreshing or recording the version (commit does).
func (ix *Indexer) applyEvent(ctx context.Context, t tree, ev changes.Event, res *ApplyResult) error {
	// Comment events go to the comments index only (comments.go).
	if done, err := ix.applyComments(ctx, t, ev, res); done || err != nil {
		return err
	}
	v := ev.Transaction
	ids := dedup(ev.ObjectIDs)
	targets := t.Subtree(ev.Branch)
	if ev.Kind == changes.KindBranchDeleted {
		// The branch object left branch 4: every branch loses its document.
		targets = t.Subtree(content.BranchDefault)
		if err := ix.purgeBranch(ctx, ev.Branch, v, res); err != nil {
			return err
		}
	}
	if ev.Kind != changes.KindBranchDeleted {
		// A changed language fallback changes the display-name fields of
		// every document of the branches it reaches (fallback.go).
		if err := ix.refreshFallbacks(ctx, t, ids, targets, v, res); err != nil {
			return err
		}
	}
	if ev.Kind != changes.KindBranchDeleted {
		// A type's changed display-name attribute changes the display
		// names of its objects (displayname.go).
		if err := ix.refreshTypeNames(ctx, t, ev.Branch, ev.Kind, ids, targets, v, res); err != nil {
			return err
		}
	}
	// Built in batches, written branch by branch in phases (phases.go).
	origin := map[int64]bool{ev.Branch: ev.Kind != changes.KindBranchDeleted}
	on := make(map[int64][]int64, len(targets))
	for _, b := range targets {
		on[b] = ids
	}
	if err := ix.writePhased(ctx, t, v, targets, origin, on, res); err != nil {
		return err
	}
	if ev.Kind == changes.KindCreated && ev.Branch == content.BranchDefault {
		// A new branch sees every object of its chain: index them all.
		for _, id := range ids {
			if t.Has(id) && id != content.BranchDefault {
				if err := ix.indexBranch(ctx, t, id, v, res); err != nil {
					return err
				}
				res.Branches++
			}
		}
	}
	return nil
}

// ApplyPayload parses and applies one outbox payload.
func (ix *Indexer) ApplyPayload(ctx context.Context, payload []byte) (ApplyResult, error) {
	ev, err := changes.Parse(payload)
	if err != nil {
		return ApplyResult{}, err
	}
	return ix.Apply(ctx, ev)
}

// IndexBranch (re)indexes every object visible on branch at version, in
// batches. Apply calls it for new branches; a reindex command can call it
// for every branch.
func (ix *Indexer) IndexBranch(ctx context.Context, branch, version int64) (ApplyResult, error) {
	var res ApplyResult
	if err := ix.EnsureIndexes(ctx); err != nil {
		return res, err
	}
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return res, err
	}
	if err := ix.indexBranch(ctx, t, branch, version, &res); err != nil {
		return res, err
	}
	return res, ix.refresh(ctx)
}

func (ix *Indexer) indexBranch(ctx context.Context, t tree, branch, version int64, res *ApplyResult) error {
	return ix.indexBranchProgress(ctx, t, branch, version, res, nil)
}

// indexBranchProgress is indexBranch calling report (if not nil) after
// every batch.
func (ix *Indexer) indexBranchProgress(ctx context.Context, t tree, branch, version int64, res *ApplyResult, report func(*ApplyResult)) error {
	return ix.indexBranchSkip(ctx, t, branch, version, res, report, nil)
}

// indexBranchSkip is indexBranchProgress leaving out the objects in skip.
func (ix *Indexer) indexBranchSkip(ctx context.Context, t tree, branch, version int64, res *ApplyResult, report func(*ApplyResult), skip map[int64]bool) error {
	return ix.indexMatching(ctx, t, branch, version, store.ObjectQuery{}, res, report, skip)
}

// indexMatching is indexBranchSkip for the objects of the branch that q
// (without AfterID and Limit) selects.
func (ix *Indexer) indexMatching(ctx context.Context, t tree, branch, version int64, q store.ObjectQuery, res *ApplyResult, report func(*ApplyResult), skip map[int64]bool) error {
	chain := t.chain(branch)
	if chain == nil {
		return nil
	}
	var after int64
	for {
		q.AfterID, q.Limit = after, ix.opts.Batch
		rows, err := ix.st.ListObjectsIn(ctx, chain, q)
		if err != nil {
			return fmt.Errorf("indexwriter: list objects of branch %d: %w", branch, err)
		}
		var ids, build []int64
		for _, r := range rows {
			if len(ids) == 0 || ids[len(ids)-1] != r.ID {
				ids = append(ids, r.ID)
				if !skip[r.ID] {
					build = append(build, r.ID)
				}
			}
		}
		if len(ids) == 0 {
			return nil
		}
		if len(build) > 0 {
			ops, err := ix.build(ctx, t, branch, version, build)
			if err != nil {
				return err
			}
			if err := ix.write(ctx, ops, res); err != nil {
				return err
			}
		}
		if report != nil {
			report(res)
		}
		if len(ids) < ix.opts.Batch {
			return nil
		}
		after = ids[len(ids)-1]
	}
}

// purgeBranch deletes every document of a deleted branch, paging by id.
func (ix *Indexer) purgeBranch(ctx context.Context, branch, version int64, res *ApplyResult) error {
	for i, index := range ix.targets(ctx) {
		err := ix.purgeBranchIn(withTargets(ctx, []string{index}), index, branch, version, res)
		if err != nil && (i == 0 || !errors.Is(err, search.ErrIndexNotFound)) {
			return err
		}
	}
	return nil
}

func (ix *Indexer) purgeBranchIn(ctx context.Context, index string, branch, version int64, res *ApplyResult) error {
	var after int64 = -1
	for {
		r, err := ix.eng.Search(ctx, search.SearchRequest{Index: index,
			Query: search.And{search.Term{Field: indexdoc.FieldBranch, Value: branch}, search.Range{Field: indexdoc.FieldID, Gt: after}},
			Sort:  []search.SortField{{Field: indexdoc.FieldID}}, Size: ix.opts.Batch})
		if err != nil {
			return fmt.Errorf("indexwriter: list documents of branch %d: %w", branch, err)
		}
		if len(r.Hits) == 0 {
			return nil
		}
		ops := make([]search.Op, 0, len(r.Hits))
		for _, h := range r.Hits {
			ops = append(ops, search.Delete(h.ID, version))
			if id, ok := h.Fields[indexdoc.FieldID].(int64); ok {
				after = max(after, id)
			}
		}
		if err := ix.write(ctx, ops, res); err != nil {
			return err
		}
		if len(r.Hits) < ix.opts.Batch {
			return nil
		}
	}
}

// write sends ops in one Bulk to every target index of ctx (the objects
// index, see targets); res counts the first target only. A secondary
// target that no longer exists (an aborted reindex) is skipped. One Bulk,
// not chunks: an engine that shows writes before Refresh shows a whole
// Bulk at once (search.Engine), so the documents of one pass on a branch
// (a whole transaction, a promote of 10,000 objects included) appear
// together (writePhased writes the branches of a pass in at most two).
func (ix *Indexer) write(ctx context.Context, ops []search.Op, res *ApplyResult) error {
	if len(ops) == 0 {
		return nil
	}
	for i, index := range ix.targets(ctx) {
		r, err := ix.eng.Bulk(ctx, index, ops)
		if i > 0 && errors.Is(err, search.ErrIndexNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("indexwriter: bulk %s: %w", index, err)
		}
		if i == 0 {
			res.Ops += len(ops)
			res.Applied += r.Applied
			res.Stale += r.Stale
		}
	}
	return nil
}

// refresh refreshes every target index of ctx.
func (ix *Indexer) refresh(ctx context.Context) error {
	for i, index := range ix.targets(ctx) {
		err := ix.eng.Refresh(ctx, index)
		if err != nil && (i == 0 || !errors.Is(err, search.ErrIndexNotFound)) {
			return fmt.Errorf("indexwriter: refresh %s: %w", index, err)
		}
	}
	return nil
}
