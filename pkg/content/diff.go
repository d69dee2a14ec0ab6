package content

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// Limits of the branch diff (BranchDiff). An entry carries up to three
// versions of every value group the child overrides.
const (
	// DefaultDiffTake is the page size when a request gives none.
	DefaultDiffTake = 50
	// MaxDiffTake caps a page.
	MaxDiffTake = 200
)

// Kinds of a diff entry: what the child did to the object row.
const (
	DiffCreated  = "created"  // the child has the object, its parent does not
	DiffDeleted  = "deleted"  // the child deleted an object its parent has live
	DiffRestored = "restored" // the child has live an object its parent deleted
	DiffUpdated  = "updated"  // values only (or a row like its parent's)
)

// DiffQuery pages a branch's diff against its parent.
type DiffQuery struct {
	Caller   *auth.Principal
	Take     int    // 0 = DefaultDiffTake; 1..MaxDiffTake
	Continue string // "" = the first page
}

// ObjectDiff is what a child branch holds of its own of one object.
type ObjectDiff struct {
	Object        int64
	Type          int64
	GUID          string
	APIIdentifier string
	Kind          string // DiffCreated, …
	// Transaction is the child's newest change of the object's row (0:
	// the child has values of it only).
	Transaction int64
	// Conflict: the parent changed the object's row (deleted or restored
	// it) after the child changed it, or a value (Changes) conflicts.
	Conflict bool
	// RowConflict is the row part of Conflict.
	RowConflict bool
	Changes     []ValueDiff
}

// ValueDiff is one (attribute, language, variant) group the child stores.
type ValueDiff struct {
	Attribute, Language, Variant int64
	// Transaction is the child's newest change of the group.
	Transaction int64
	// Child is what the child holds (empty: the child removed the value,
	// a null override); Base the parent's effective value as of
	// Transaction; Parent its effective value now.
	Child, Base, Parent []Value
	// Conflict: the parent's value changed since Transaction (Base and
	// Parent differ) to something other than the child's.
	Conflict bool
}

// DiffPage is one page of a branch's diff, by object id.
type DiffPage struct {
	Branch, Parent int64
	Objects        []ObjectDiff
	Continue       string // "" on the last page
}

// BranchDiff lists what the child branch holds of its own against its
// parent: the objects it created, deleted or restored and the value
// groups it overrides, each with the parent's value at the child's
// change (the base) and now, paged by object id. Every object is one:
// schema objects, grants, webhooks and templates diff like content.
// Secret attributes (model.SecretAttribute) are left out.
func (s *Service) BranchDiff(ctx context.Context, branch string, q DiffQuery) (DiffPage, error) {
	take, err := pageTake(q.Take, DefaultDiffTake, MaxDiffTake)
	if err != nil {
		return DiffPage{}, err
	}
	child, parent, err := childAndParent(ctx, s.st, branch)
	if err != nil {
		return DiffPage{}, err
	}
	scope := "diff/" + strconv.FormatInt(child.branch, 10)
	after, err := decodeToken(q.Continue, scope)
	if err != nil {
		return DiffPage{}, err
	}
	ids, err := s.st.ListBranchObjectIDs(ctx, child.branch, after, take+1)
	if err != nil {
		return DiffPage{}, err
	}
	page := DiffPage{Branch: child.branch, Parent: parent.branch, Objects: []ObjectDiff{}}
	if len(ids) > take {
		ids = ids[:take]
		page.Continue = encodeToken(ids[take-1], scope)
	}
	diffs, err := s.diffObjects(ctx, child, parent, ids)
	if err != nil {
		return DiffPage{}, err
	}
	for _, d := range diffs {
		d.Changes = slices.DeleteFunc(d.Changes, func(c ValueDiff) bool { return model.SecretAttribute(c.Attribute) })
		page.Objects = append(page.Objects, d)
	}
	return page, nil
}

// childAndParent resolves a branch on r and returns its view and its
// parent's; the default branch has no parent (ErrInvalid).
func childAndParent(ctx context.Context, r store.Reader, branch string) (view, view, error) {
	branches, err := loadBranches(ctx, r)
	if err != nil {
		return view{}, view{}, err
	}
	id, err := findBranch(branches, branch)
	if err != nil {
		return view{}, view{}, err
	}
	child, err := newView(r, branches, id)
	if err != nil {
		return view{}, view{}, err
	}
	if len(child.chain) < 2 {
		return view{}, view{}, invalidf("branch %d has no parent to compare with", id)
	}
	parent, err := newView(r, branches, child.chain[1])
	return child, parent, err
}

// pageTake reads a page size: 0 is def, else 1..maxTake.
func pageTake(take, def, maxTake int) (int, error) {
	switch {
	case take == 0:
		return def, nil
	case take < 1 || take > maxTake:
		return 0, invalidf("take must be between 1 and %d", maxTake)
	}
	return take, nil
}

// parentGroup is a parent's effective value group of an object.
type parentGroup struct {
	values []Value
	own    bool  // the parent branch itself stores rows of the group
	newest int64 // newest change of the group along the parent's chain
}

// diffObjects compares what child stores of ids with parent, reading
// through child's reader (the store or a write transaction), in a few
// queries per call whatever the number of ids: the child's rows and
// values, the parent's, and the parent's as of each child change older
// than the parent's newest change of the group.
func (s *Service) diffObjects(ctx context.Context, child, parent view, ids []int64) ([]ObjectDiff, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	r := child.r
	rows, err := r.GetObjects(ctx, child.branch, ids)
	if err != nil {
		return nil, err
	}
	own := make(map[int64]store.Object, len(rows))
	for _, o := range rows {
		own[o.ID] = o
	}
	pRows, err := parent.objects(ctx, ids)
	if err != nil {
		return nil, err
	}
	cVals, err := r.ListValues(ctx, child.branch, ids, store.ValueFilter{})
	if err != nil {
		return nil, err
	}
	pVals, err := r.ListValuesIn(ctx, parent.chain, ids, store.ValueFilter{})
	if err != nil {
		return nil, err
	}
	now := effectiveGroups(parent, pVals)
	// The base of a group the parent changed after the child did: the
	// parent's values as of the child's change, one read per transaction.
	type objGroup struct {
		id int64
		k  groupKey
	}
	childGroups := map[objGroup][]store.Value{}
	var order []objGroup
	for _, val := range cVals {
		g := objGroup{val.ObjectID, groupKey{val.AttributeID, val.Language, val.Variant}}
		if _, ok := childGroups[g]; !ok {
			order = append(order, g)
		}
		childGroups[g] = append(childGroups[g], val)
	}
	changedAt := func(vals []store.Value) int64 {
		var tx int64
		for _, v := range vals {
			tx = max(tx, v.ModifiedTx)
		}
		return tx
	}
	needBase := map[int64][]int64{} // child transaction → objects
	for _, g := range order {
		tx := changedAt(childGroups[g])
		if now[g.id][g.k].newest > tx && !slices.Contains(needBase[tx], g.id) {
			needBase[tx] = append(needBase[tx], g.id)
		}
	}
	bases := map[int64]map[int64]map[groupKey]parentGroup{}
	for tx, objs := range needBase {
		then, err := s.st.ValuesAsOf(ctx, parent.chain, objs, tx)
		if err != nil {
			return nil, err
		}
		bases[tx] = effectiveGroups(parent, then)
	}
	out := make([]ObjectDiff, 0, len(ids))
	byID := map[int64]int{}
	for _, id := range ids {
		d := ObjectDiff{Object: id, Kind: DiffUpdated, Changes: []ValueDiff{}}
		p, onParent := pRows[id]
		c, hasRow := own[id]
		switch {
		case hasRow:
			d.Type, d.GUID, d.APIIdentifier, d.Transaction = c.TypeID, c.GUID, c.APIIdentifier, c.ModifiedTx
		case onParent:
			d.Type, d.GUID, d.APIIdentifier = p.TypeID, p.GUID, p.APIIdentifier
		}
		switch {
		case hasRow && !onParent:
			d.Kind = DiffCreated
		case hasRow && c.Deleted && !p.Deleted:
			d.Kind = DiffDeleted
			// The parent changed what the child deleted since.
			d.RowConflict = p.ModifiedTx > c.ModifiedTx || newestOf(now[id]) > c.ModifiedTx
		case hasRow && !c.Deleted && p.Deleted:
			d.Kind = DiffRestored
			d.RowConflict = p.ModifiedTx > c.ModifiedTx
		}
		d.Conflict = d.RowConflict
		byID[id] = len(out)
		out = append(out, d)
	}
	for _, g := range order {
		vals := childGroups[g]
		tx := changedAt(vals)
		cur := now[g.id][g.k]
		base := cur.values
		if cur.newest > tx {
			base = bases[tx][g.id][g.k].values
		}
		vd := ValueDiff{Attribute: g.k.attr, Language: g.k.lang, Variant: g.k.variant, Transaction: tx,
			Child: groupValues(byKey(nonNull(vals))), Base: orEmpty(base), Parent: orEmpty(cur.values)}
		vd.Conflict = !sameValues(vd.Base, vd.Parent) && !sameValues(vd.Child, vd.Parent)
		d := &out[byID[g.id]]
		// A child edit of an object the parent deleted since is a
		// conflict too.
		if p, ok := pRows[g.id]; ok && p.Deleted && p.ModifiedTx > tx && d.Kind == DiffUpdated {
			d.RowConflict = true
		}
		d.Changes = append(d.Changes, vd)
		d.Conflict = d.Conflict || vd.Conflict || d.RowConflict
	}
	return out, nil
}

// effectiveGroups applies inheritance along v's chain to rows (a chain
// read) and returns per object and group its effective values.
func effectiveGroups(v view, rows []store.Value) map[int64]map[groupKey]parentGroup {
	out := map[int64]map[groupKey]parentGroup{}
	v.order.EachValueGroup(rows, func(group []store.Value, best int64) {
		first := group[0]
		k := groupKey{first.AttributeID, first.Language, first.Variant}
		var pg parentGroup
		var win []store.Value
		for _, r := range group {
			pg.newest = max(pg.newest, r.ModifiedTx)
			pg.own = pg.own || r.Branch == v.branch
			if r.Branch == best && !model.IsNull(r.JSON) {
				win = append(win, r)
			}
		}
		pg.values = groupValues(byKey(win))
		if out[first.ObjectID] == nil {
			out[first.ObjectID] = map[groupKey]parentGroup{}
		}
		out[first.ObjectID][k] = pg
	})
	return out
}

// newestOf is the newest change of any of an object's groups.
func newestOf(groups map[groupKey]parentGroup) int64 {
	var tx int64
	for _, g := range groups {
		tx = max(tx, g.newest)
	}
	return tx
}

func nonNull(vals []store.Value) []store.Value {
	return slices.DeleteFunc(slices.Clone(vals), func(v store.Value) bool { return model.IsNull(v.JSON) })
}

func orEmpty(v []Value) []Value {
	if v == nil {
		return []Value{}
	}
	return v
}

// conflictSummary names the first conflicting objects of diffs.
func conflictSummary(diffs []ObjectDiff) string {
	var ids []int64
	n := 0
	for _, d := range diffs {
		if d.Conflict {
			n++
			if len(ids) < 10 {
				ids = append(ids, d.Object)
			}
		}
	}
	return fmt.Sprintf("%d conflicting objects (changed on the parent since the child changed them), first %v", n, ids)
}
