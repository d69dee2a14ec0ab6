package content

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/store"
)

// view reads one branch through its chain. r is the store or an open write
// transaction (which then sees its own writes).
type view struct {
	r      store.Reader
	branch int64
	chain  []int64 // branch first, BranchDefault last
	rank   map[int64]int
}

// branchInfo is one branch object with its parent.
type branchInfo struct {
	obj    store.Object
	parent int64 // 0 for the default branch
}

// loadBranches reads every branch object and its parent in two queries
// (objects, then attribute 4000 values), whatever the depth of the tree.
func loadBranches(ctx context.Context, r store.Reader) (map[int64]branchInfo, error) {
	objs, err := r.ListObjects(ctx, BranchDefault, store.ObjectQuery{TypeIDs: []int64{TypeBranch}})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]branchInfo, len(objs))
	ids := make([]int64, 0, len(objs))
	for _, o := range objs {
		if !o.Deleted {
			out[o.ID] = branchInfo{obj: o}
			ids = append(ids, o.ID)
		}
	}
	vals, err := r.ListValues(ctx, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrBranchParent}})
	if err != nil {
		return nil, err
	}
	for _, v := range vals {
		b, ok := out[v.ObjectID]
		if !ok || v.ObjectID == BranchDefault {
			continue
		}
		if p, err := strconv.ParseInt(string(bytes.TrimSpace(v.JSON)), 10, 64); err == nil {
			b.parent = p
			out[v.ObjectID] = b
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
	v := view{r: r, branch: id, rank: map[int64]int{}}
	for cur := id; ; {
		if _, ok := branches[cur]; !ok {
			return view{}, notFoundf("branch %d", cur)
		}
		if _, seen := v.rank[cur]; seen {
			return view{}, fmt.Errorf("content: branch %d: parent cycle", id)
		}
		v.rank[cur] = len(v.chain)
		v.chain = append(v.chain, cur)
		if cur == BranchDefault {
			return v, nil
		}
		cur = branches[cur].parent
	}
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
	return view{r: r, branch: BranchDefault, chain: []int64{BranchDefault}, rank: map[int64]int{BranchDefault: 0}}
}

// rootObject is the virtual meta-type 0.
func rootObject() store.Object {
	return store.Object{ID: RootID, Branch: BranchDefault, TypeID: RootID, GUID: systemGUID(0), APIIdentifier: "root"}
}

// pick returns the effective row per id: the row of the nearest branch in
// the chain. rows are ordered by id (as ChainReader returns them).
func (v view) pick(rows []store.Object) map[int64]store.Object {
	out := make(map[int64]store.Object, len(rows))
	for _, o := range rows {
		cur, ok := out[o.ID]
		if !ok || v.rank[o.Branch] < v.rank[cur.Branch] {
			out[o.ID] = o
		}
	}
	return out
}

// objects returns the effective rows of ids (root included when asked) in
// one query. Missing ids are absent from the map.
func (v view) objects(ctx context.Context, ids []int64) (map[int64]store.Object, error) {
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
	sameGroup := func(a, b store.Value) bool {
		return a.ObjectID == b.ObjectID && a.AttributeID == b.AttributeID && a.Variant == b.Variant && a.Language == b.Language
	}
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && sameGroup(rows[start], rows[end]) {
			end++
		}
		group := rows[start:end]
		best := group[0].Branch
		for _, r := range group {
			if v.rank[r.Branch] < v.rank[best] {
				best = r.Branch
			}
		}
		for _, r := range group {
			vs.newest[r.ObjectID] = max(vs.newest[r.ObjectID], r.ModifiedTx)
			isNull := bytes.Equal(bytes.TrimSpace(r.JSON), []byte("null"))
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
		start = end
	}
	return vs, nil
}
