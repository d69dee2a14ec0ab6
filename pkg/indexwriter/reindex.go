package indexwriter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Reindexing.
//
// The objects index name (indexdoc.ObjectsIndex with the prefix) is an alias once a
// full reindex has run: Rebuild writes every document into a new physical
// index "<objects>-<unix ms>", then points the alias at it in one atomic
// step (search.Aliaser) and deletes the old index. Readers and the
// indexer keep using the alias name and never see a missing or half-built
// index. (A deployment from before aliases has a concrete index of that
// name; the first switch replaces it.)
//
// Events applied while the new index is built must not be lost. Rebuild
// therefore writes a marker naming the new index into ReindexStateIndex
// before it starts, and Apply reads the marker (after the event's
// transaction committed) and then writes to both the alias and the new
// index. Rebuild reads the store's newest transaction v0 after writing the
// marker and versions every document it builds with v0; documents are
// built from the state read afterwards, which includes v0. So every
// transaction <= v0 is in the rebuilt documents, and every transaction > v0
// committed after the marker was written, so its Apply wrote it into the
// new index too, with a higher version that the rebuild's write cannot
// overwrite (and a tombstone the rebuild cannot resurrect). After the
// switch the marker is removed. The cost is one Get per event.

// ReindexStateIndex holds the reindex marker (without the prefix).
const ReindexStateIndex = "indexer-reindex"

const (
	markerDocID = "target"
	markerField = "index"
)

// ErrNoAliases means the engine cannot switch aliases, so it cannot reindex
// without downtime.
var ErrNoAliases = errors.New("indexwriter: search engine has no alias support")

// ReindexMapping is the mapping of ReindexStateIndex.
func ReindexMapping() search.Mapping {
	return search.Mapping{Fields: map[string]search.Kind{markerField: search.Keyword}}
}

// Progress reports how far a rebuild is: Done of Total documents (one per
// branch and object). Total is counted before the build starts, so objects
// created meanwhile can make Done exceed it until the last report.
type Progress struct {
	Done, Total int64
}

// RebuildResult says what Rebuild did.
type RebuildResult struct {
	Index     string // the new physical index the alias points at
	Previous  string // the index it replaced and deleted ("" if none or a concrete index)
	Version   int64  // the store's newest transaction when the build began (v0)
	Documents int64  // ops written (upserts and tombstones)
	Branches  int
	Comments  int64 // comment documents written by Rebuild (IndexAllComments)
}

type targetsKey struct{}

// withTargets makes write, refresh and purgeBranch write to indexes.
func withTargets(ctx context.Context, indexes []string) context.Context {
	return context.WithValue(ctx, targetsKey{}, indexes)
}

// targets are the indexes writes go to: the objects index unless ctx says
// otherwise. The first is the primary.
func (ix *Indexer) targets(ctx context.Context) []string {
	if t, ok := ctx.Value(targetsKey{}).([]string); ok && len(t) > 0 {
		return t
	}
	return []string{ix.objects}
}

func (ix *Indexer) markerIndex() string { return ix.opts.IndexPrefix + ReindexStateIndex }

// withReindexTarget adds the index a running rebuild builds to the write
// targets of ctx.
func (ix *Indexer) withReindexTarget(ctx context.Context) (context.Context, error) {
	doc, err := ix.eng.Get(ctx, ix.markerIndex(), markerDocID)
	switch {
	case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
		return ctx, nil
	case err != nil:
		return ctx, fmt.Errorf("indexwriter: read reindex marker: %w", err)
	}
	target, _ := doc.Fields[markerField].(string)
	if target == "" || target == ix.objects {
		return ctx, nil
	}
	return withTargets(ctx, []string{ix.objects, target}), nil
}

// setMarker writes (target != "") or removes the reindex marker.
func (ix *Indexer) setMarker(ctx context.Context, target string) error {
	if err := ix.eng.EnsureIndex(ctx, ix.markerIndex(), ReindexMapping()); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.markerIndex(), err)
	}
	v := time.Now().UnixNano()
	op := search.Delete(markerDocID, v)
	if target != "" {
		op = search.Upsert(search.Document{ID: markerDocID, Version: v, Fields: map[string]any{markerField: target}})
	}
	if _, err := ix.eng.Bulk(ctx, ix.markerIndex(), []search.Op{op}); err != nil {
		return fmt.Errorf("indexwriter: write reindex marker: %w", err)
	}
	return nil
}

// Head returns the store's newest committed transaction id.
type Head func(context.Context) (int64, error)

// Rebuild rebuilds every branch from the store into a new index and
// switches the objects alias to it (see the comment at the top of this
// file), and reindexes every comment in place (IndexAllComments). progress, if not nil, is called after every batch. Run one
// rebuild at a time; the indexer may keep running. On error the new index
// and the marker are removed again and the alias is left alone.
func (ix *Indexer) Rebuild(ctx context.Context, head Head, progress func(Progress)) (res RebuildResult, err error) {
	al, ok := ix.eng.(search.Aliaser)
	if !ok {
		return res, ErrNoAliases
	}
	if err := ix.EnsureIndexes(ctx); err != nil {
		return res, err
	}
	res.Index = fmt.Sprintf("%s-%d", ix.objects, time.Now().UnixMilli())
	if err := ix.eng.EnsureIndex(ctx, res.Index, ix.mapping); err != nil {
		return res, fmt.Errorf("indexwriter: create %s: %w", res.Index, err)
	}
	switched := false
	defer func() {
		if err == nil || switched {
			return
		}
		cctx := context.WithoutCancel(ctx)
		_ = ix.setMarker(cctx, "")
		_ = ix.eng.DeleteIndex(cctx, res.Index)
	}()
	if err := ix.setMarker(ctx, res.Index); err != nil {
		return res, err
	}
	if res.Version, err = head(ctx); err != nil {
		return res, fmt.Errorf("indexwriter: read newest transaction: %w", err)
	}
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return res, err
	}
	branches := t.Subtree(content.BranchDefault)
	res.Branches = len(branches)
	if err := ix.buildAll(withTargets(ctx, []string{res.Index}), t, branches, max(res.Version, 1), &res, progress); err != nil {
		return res, err
	}
	// Comments are rebuilt in place (their index has no alias) with the
	// same version v0: comment events after v0 carry higher versions that
	// these writes cannot overwrite.
	cres, err := ix.IndexAllComments(ctx, max(res.Version, 1))
	if err != nil {
		return res, err
	}
	res.Comments = int64(cres.Ops)
	if err := ix.eng.Refresh(ctx, res.Index); err != nil {
		return res, fmt.Errorf("indexwriter: refresh %s: %w", res.Index, err)
	}
	if res.Previous, err = al.SwitchAlias(ctx, ix.objects, res.Index); err != nil {
		return res, fmt.Errorf("indexwriter: switch alias %s: %w", ix.objects, err)
	}
	switched = true
	if err := ix.setMarker(ctx, ""); err != nil {
		return res, err
	}
	// The rebuild has the changes of every transaction up to its
	// version, parked ones included.
	if err := ix.clearParked(ctx, res.Version); err != nil {
		return res, err
	}
	if res.Previous != "" && res.Previous != res.Index {
		if err := ix.eng.DeleteIndex(ctx, res.Previous); err != nil && !errors.Is(err, search.ErrIndexNotFound) {
			return res, fmt.Errorf("indexwriter: delete old index %s: %w", res.Previous, err)
		}
	}
	ix.log.Info("reindex done", "index", res.Index, "previous", res.Previous, "version", res.Version,
		"documents", res.Documents, "branches", res.Branches, "comments", res.Comments)
	return res, nil
}

// RebuildBranch reindexes branch and its descendants in place (in the live
// index), versioned with the store's newest transaction, and deletes the
// documents of those branches that the store no longer has (left with an
// older version). It repairs a branch without a full rebuild.
func (ix *Indexer) RebuildBranch(ctx context.Context, branch int64, head Head, progress func(Progress)) (RebuildResult, error) {
	res := RebuildResult{Index: ix.objects}
	if err := ix.EnsureIndexes(ctx); err != nil {
		return res, err
	}
	ctx, err := ix.withReindexTarget(ctx)
	if err != nil {
		return res, err
	}
	if res.Version, err = head(ctx); err != nil {
		return res, fmt.Errorf("indexwriter: read newest transaction: %w", err)
	}
	v := max(res.Version, 1)
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return res, err
	}
	branches := t.Subtree(branch)
	if branches == nil {
		return res, fmt.Errorf("indexwriter: branch %d: %w", branch, store.ErrNotFound)
	}
	res.Branches = len(branches)
	if err := ix.buildAll(ctx, t, branches, v, &res, progress); err != nil {
		return res, err
	}
	if err := ix.refresh(ctx); err != nil {
		return res, err
	}
	var ar ApplyResult
	for _, b := range branches {
		if err := ix.pruneBranch(ctx, b, v, &ar); err != nil {
			return res, err
		}
	}
	res.Documents += int64(ar.Ops)
	return res, ix.refresh(ctx)
}

// buildAll counts, then indexes, every visible object of branches.
func (ix *Indexer) buildAll(ctx context.Context, t tree, branches []int64, v int64, res *RebuildResult, progress func(Progress)) error {
	var p Progress
	for _, b := range branches {
		n, err := ix.countChain(ctx, t.chain(b))
		if err != nil {
			return err
		}
		p.Total += n
	}
	report := func(ar *ApplyResult) {
		p.Done = res.Documents + int64(ar.Ops)
		if progress != nil {
			progress(p)
		}
	}
	for _, b := range branches {
		var ar ApplyResult
		if err := ix.indexBranchProgress(ctx, t, b, v, &ar, report); err != nil {
			return err
		}
		res.Documents += int64(ar.Ops)
	}
	p.Done = res.Documents
	p.Total = max(p.Total, p.Done) // objects created during the build
	if progress != nil {
		progress(p)
	}
	return nil
}

// countChain counts the distinct objects stored on a branch chain.
func (ix *Indexer) countChain(ctx context.Context, chain []int64) (int64, error) {
	if chain == nil {
		return 0, nil
	}
	var n, after int64
	const page = 10000
	for {
		rows, err := ix.st.ListObjectsIn(ctx, chain, store.ObjectQuery{AfterID: after, Limit: page})
		if err != nil {
			return 0, fmt.Errorf("indexwriter: count objects: %w", err)
		}
		k := 0
		for i, r := range rows {
			if i == 0 || r.ID != rows[i-1].ID {
				k++
			}
		}
		n += int64(k)
		if k < page {
			return n, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// pruneBranch deletes the documents of branch whose version is below v:
// after a pass that wrote every object of the branch at v, those are
// objects the store no longer has there.
func (ix *Indexer) pruneBranch(ctx context.Context, branch, v int64, res *ApplyResult) error {
	var after int64 = -1
	for {
		r, err := ix.eng.Search(ctx, search.SearchRequest{Index: ix.objects,
			Query: search.And{search.Term{Field: indexdoc.FieldBranch, Value: branch}, search.Range{Field: indexdoc.FieldID, Gt: after}},
			Sort:  []search.SortField{{Field: indexdoc.FieldID}}, Size: ix.opts.Batch})
		if err != nil {
			return fmt.Errorf("indexwriter: list documents of branch %d: %w", branch, err)
		}
		var ops []search.Op
		for _, h := range r.Hits {
			if h.Version < v {
				ops = append(ops, search.Delete(h.ID, v))
			}
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
