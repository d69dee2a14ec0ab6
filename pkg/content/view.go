package content

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/store"
)

// view reads one branch through its chain. r is the store or an open write
// transaction (which then sees its own writes).
type view struct {
	r      store.Reader
	branch int64
	chain  []int64     // branch first, BranchDefault last
	order  model.Chain // inheritance along chain
	// known, when set (remember), answers objects for ids it was read for.
	known *knownObjects
}

// knownObjects are the effective rows a view read for the ids in asked
// (the ids without a row are absent from rows).
type knownObjects struct {
	asked map[int64]bool
	rows  map[int64]store.Object
}

// remember returns v answering objects for ids from one read, made now:
// for a write transaction that reads several sets of objects it knows
// beforehand (its types and its attributes) in one round trip. Only for
// reads with no write of the transaction between (the transaction holds
// the writer lock, so nothing else changes them).
func (v view) remember(ctx context.Context, ids []int64) (view, error) {
	rows, err := v.objects(ctx, ids)
	if err != nil {
		return view{}, err
	}
	k := &knownObjects{asked: make(map[int64]bool, len(ids)), rows: rows}
	for _, id := range ids {
		k.asked[id] = true
	}
	v.known = k
	return v, nil
}

// branchInfo is one branch object with its parent.
type branchInfo struct {
	obj    store.Object
	parent int64 // 0 for the default branch
}

// ReadBranchTree reads the branch tree (model.NewBranchTree) in two
// queries, whatever its depth: the branch objects (returned too, deleted
// ones included), then their parents (attribute 4000).
func ReadBranchTree(ctx context.Context, r store.Reader) (model.BranchTree, []store.Object, error) {
	objs, err := r.ListObjects(ctx, BranchDefault, store.ObjectQuery{TypeIDs: []int64{TypeBranch}})
	if err != nil {
		return model.BranchTree{}, nil, fmt.Errorf("content: list branches: %w", err)
	}
	ids := make([]int64, 0, len(objs))
	for _, o := range objs {
		if !o.Deleted {
			ids = append(ids, o.ID)
		}
	}
	vals, err := r.ListValues(ctx, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrBranchParent}})
	if err != nil {
		return model.BranchTree{}, nil, fmt.Errorf("content: read branch parents: %w", err)
	}
	return model.NewBranchTree(objs, vals), objs, nil
}

// loadBranches reads every branch object and its parent (ReadBranchTree).
func loadBranches(ctx context.Context, r store.Reader) (map[int64]branchInfo, error) {
	t, objs, err := ReadBranchTree(ctx, r)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]branchInfo, len(objs))
	for _, o := range objs {
		if t.Has(o.ID) {
			out[o.ID] = branchInfo{obj: o, parent: t.Parent(o.ID)}
		}
	}
	return out, nil
}

// findBranch resolves a branch identifier among the branch objects; an
// identifier no branch carries may be an alias (params.BranchAlias:
// "draft" is the default branch).
func findBranch(branches map[int64]branchInfo, ident string) (int64, error) {
	id, err := ParseIdent(ident)
	if err != nil {
		return 0, err
	}
	var hits []int64
	for bid, b := range branches {
		switch {
		case id.Kind == IdentID && bid == id.ID,
			id.Kind == IdentGUID && b.obj.GUID == id.GUID,
			id.Kind != IdentID && b.obj.APIIdentifier == id.Raw:
			hits = append(hits, bid)
		}
	}
	switch len(hits) {
	case 0:
		if alias, ok := params.BranchAlias(ident); ok {
			if _, exists := branches[alias]; exists {
				return alias, nil
			}
		}
		return 0, notFoundf("branch %q", ident)
	case 1:
		return hits[0], nil
	default:
		return 0, fmt.Errorf("%w: branch %q", ErrAmbiguous, ident)
	}
}

// newView builds the view of branch id from the branch tree.
func newView(r store.Reader, branches map[int64]branchInfo, id int64) (view, error) {
	chain, err := model.WalkChain(id, func(b int64) (int64, bool, error) {
		bi, ok := branches[b]
		return bi.parent, ok, nil
	})
	var broken *model.BrokenChainError
	switch {
	case errors.As(err, &broken) && broken.Cycle:
		return view{}, fmt.Errorf("content: branch %d: parent cycle", id)
	case errors.As(err, &broken):
		return view{}, notFoundf("branch %d", broken.At)
	case err != nil:
		return view{}, err
	}
	return view{r: r, branch: id, chain: chain, order: model.NewChain(chain)}, nil
}

// viewOf resolves a branch identifier and returns its view.
func viewOf(ctx context.Context, r store.Reader, ident string) (view, error) {
	branches, err := loadBranches(ctx, r)
	if err != nil {
		return view{}, err
	}
	id, err := findBranch(branches, ident)
	if err != nil {
		return view{}, err
	}
	return newView(r, branches, id)
}

// defaultView is the view of branch 4 (system objects and branches).
func defaultView(r store.Reader) view {
	chain := []int64{BranchDefault}
	return view{r: r, branch: BranchDefault, chain: chain, order: model.NewChain(chain)}
}

// rootObject is the virtual meta-type 0.
func rootObject() store.Object {
	return store.Object{ID: RootID, Branch: BranchDefault, TypeID: RootID, GUID: systemGUID(0), APIIdentifier: "root"}
}

// pick returns the effective row per id (model.Chain.EffectiveObjects).
func (v view) pick(rows []store.Object) map[int64]store.Object { return v.order.EffectiveObjects(rows) }

// objects returns the effective rows of ids (root included when asked) in
// one query. Missing ids are absent from the map.
func (v view) objects(ctx context.Context, ids []int64) (map[int64]store.Object, error) {
	if v.known != nil && !slices.ContainsFunc(ids, func(id int64) bool { return !v.known.asked[id] }) {
		out := make(map[int64]store.Object, len(ids))
		for _, id := range ids {
			if o, ok := v.known.rows[id]; ok {
				out[id] = o
			}
		}
		return out, nil
	}
	rows, err := v.r.GetObjectsIn(ctx, v.chain, ids)
	if err != nil {
		return nil, err
	}
	out := v.pick(rows)
	if slices.Contains(ids, RootID) {
		out[RootID] = rootObject()
	}
	return out, nil
}

// valueSet holds, per object, the effective values and the newest local
// change, read in one query.
type valueSet struct {
	effective map[int64][]store.Value // inheritance applied, nulls dropped
	local     map[int64][]store.Value // stored on the branch itself, nulls dropped
	lastLocal map[int64]int64         // max ModifiedTx of local rows, nulls included
	newest    map[int64]int64         // max ModifiedTx of all rows along the chain
}

// values reads all values of ids along the chain in one query and applies
// inheritance per (attribute, language, variant) group.
func (v view) values(ctx context.Context, ids []int64) (valueSet, error) {
	vs := valueSet{effective: map[int64][]store.Value{}, local: map[int64][]store.Value{},
		lastLocal: map[int64]int64{}, newest: map[int64]int64{}}
	rows, err := v.r.ListValuesIn(ctx, v.chain, ids, store.ValueFilter{})
	if err != nil {
		return vs, err
	}
	v.order.EachValueGroup(rows, func(group []store.Value, best int64) {
		for _, r := range group {
			vs.newest[r.ObjectID] = max(vs.newest[r.ObjectID], r.ModifiedTx)
			isNull := model.IsNull(r.JSON)
			if r.Branch == v.branch {
				vs.lastLocal[r.ObjectID] = max(vs.lastLocal[r.ObjectID], r.ModifiedTx)
				if !isNull {
					vs.local[r.ObjectID] = append(vs.local[r.ObjectID], r)
				}
			}
			if r.Branch == best && !isNull {
				vs.effective[r.ObjectID] = append(vs.effective[r.ObjectID], r)
			}
		}
	})
	return vs, nil
}
