package content

import (
	"context"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// Branches are objects of type 40 stored on the default branch 4; the
// parent is attribute 4000. Branch 4 is the root of the tree and has none.

// GetBranches pages through all branches in id order.
//
// With q.Caller set, only the branches it may read are listed
// (auth.Principal.CanRead); a page may then hold fewer than take, and the
// continuation token stays valid.
func (s *Service) GetBranches(ctx context.Context, q ListQuery) (Page, error) {
	q.Inherited = true
	q.Deleted = nil // branch deletion is permanent: there are no tombstones
	page, err := defaultView(s.st).list(ctx, "branches", TypeBranch, q, s.st)
	if err != nil || q.Caller == nil || q.Caller.Admin {
		return page, err
	}
	ids := make([]int64, len(page.Objects))
	for i, o := range page.Objects {
		ids[i] = o.ID
	}
	chains, err := s.BranchChains(ctx, ids)
	if err != nil {
		return Page{}, err
	}
	can := q.Caller.CanRead(chains)
	page.Objects = slices.DeleteFunc(page.Objects, func(o Object) bool { return !can(o.ID) })
	return page, nil
}

// GetBranch reads one branch object by ID, GUID or ApiIdentifier.
func (s *Service) GetBranch(ctx context.Context, id string, o ReadOptions) (Object, error) {
	branches, err := loadBranches(ctx, s.st)
	if err != nil {
		return Object{}, err
	}
	bid, err := findBranch(branches, id)
	if err != nil {
		return Object{}, err
	}
	v := defaultView(s.st)
	o.Inherited = true
	p, err := v.project(ctx, o)
	if err != nil {
		return Object{}, err
	}
	objs, err := v.build(ctx, []int64{bid}, p)
	if err != nil {
		return Object{}, err
	}
	return objs[0], nil
}

// CreateBranch creates a branch from its values (name 1000, parent 4000 …;
// a missing 4000 means the default branch) and returns it as read back.
func (s *Service) CreateBranch(ctx context.Context, ch Change, values []ValueInput) (Object, Transaction, error) {
	if err := s.limits.check(values); err != nil {
		return Object{}, Transaction{}, err
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: ch.user(), Comment: ch.Comment, Branch: BranchDefault})
	if err != nil {
		return Object{}, Transaction{}, err
	}
	defer func() { _ = tx.Rollback() }()
	v := defaultView(tx)
	hasParent := slices.ContainsFunc(values, func(x ValueInput) bool { return x.Attribute == AttrBranchParent })
	if !hasParent {
		values = append(slices.Clone(values), ValueInput{Attribute: AttrBranchParent, JSON: []byte(strconv.FormatInt(BranchDefault, 10))})
	}
	checked, err := v.validateValues(ctx, ch, [][]ValueInput{values})
	if err != nil {
		return Object{}, Transaction{}, err
	}
	if g := checked[0].groups[groupKey{attr: AttrBranchParent}]; len(g) != 1 || g[0].json == nil {
		return Object{}, Transaction{}, invalidf("attribute %d: a branch needs a parent branch", AttrBranchParent)
	}
	ids, err := tx.NewObjectIDs(ctx, 1)
	if err != nil {
		return Object{}, Transaction{}, err
	}
	id := ids[0]
	obj := store.Object{ID: id, Branch: BranchDefault, TypeID: TypeBranch, GUID: newGUID()}
	if err := tx.PutObjects(ctx, obj); err != nil {
		return Object{}, Transaction{}, err
	}
	var rows []store.Value
	for _, k := range checked[0].order {
		rows = append(rows, storeRows(id, BranchDefault, checked[0].groups[k])...)
	}
	if err := tx.PutValues(ctx, rows...); err != nil {
		return Object{}, Transaction{}, err
	}
	t, err := commit(ctx, tx, ch, BranchDefault, changes.KindCreated, ids)
	if err != nil {
		return Object{}, Transaction{}, err
	}
	objs, err := defaultView(s.st).build(ctx, ids, projection{inherited: true})
	if err != nil {
		return Object{}, Transaction{}, err
	}
	return objs[0], t, nil
}

// UpdateBranch changes values of a branch object like UpdateObjects. The
// parent (4000) cannot change.
func (s *Service) UpdateBranch(ctx context.Context, id string, ch Change, values []ValueInput) (int, Transaction, error) {
	if err := s.limits.check(values); err != nil {
		return 0, Transaction{}, err
	}
	branches, err := loadBranches(ctx, s.st)
	if err != nil {
		return 0, Transaction{}, err
	}
	bid, err := findBranch(branches, id)
	if err != nil {
		return 0, Transaction{}, err
	}
	for _, val := range values {
		if val.Attribute == AttrBranchParent && string(val.JSON) != strconv.FormatInt(branches[bid].parent, 10) {
			return 0, Transaction{}, invalidf("attribute %d: the parent of branch %d cannot change", AttrBranchParent, bid)
		}
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: ch.user(), Comment: ch.Comment, Branch: BranchDefault})
	if err != nil {
		return 0, Transaction{}, err
	}
	defer func() { _ = tx.Rollback() }()
	created, ids, _, err := defaultView(tx).update(ctx, tx, ch, []ObjectInput{{ID: bid, Values: values}}, true)
	if err != nil {
		return 0, Transaction{}, err
	}
	t, err := commit(ctx, tx, ch, BranchDefault, changes.KindUpdated, ids)
	return created, t, err
}

// DeleteBranch removes a branch permanently with everything stored on it.
// The default branch and branches with child branches cannot be deleted
// (ErrInvalid).
func (s *Service) DeleteBranch(ctx context.Context, id string, ch Change) (Transaction, error) {
	tx, err := s.st.Begin(ctx, store.TxMeta{User: ch.user(), Comment: ch.Comment, Branch: BranchDefault})
	if err != nil {
		return Transaction{}, err
	}
	defer func() { _ = tx.Rollback() }()
	branches, err := loadBranches(ctx, tx)
	if err != nil {
		return Transaction{}, err
	}
	bid, err := findBranch(branches, id)
	if err != nil {
		return Transaction{}, err
	}
	if bid == BranchDefault {
		return Transaction{}, invalidf("the default branch cannot be deleted")
	}
	if err := defaultView(tx).checkObject(ctx, ch.IfMatch, bid, true); err != nil {
		return Transaction{}, err
	}
	for child, b := range branches {
		if b.parent == bid {
			return Transaction{}, invalidf("branch %d has child branch %d: delete that first", bid, child)
		}
	}
	if _, err := tx.PurgeBranch(ctx, bid); err != nil {
		return Transaction{}, err
	}
	if _, err := tx.PurgeObjects(ctx, BranchDefault, []int64{bid}); err != nil {
		return Transaction{}, err
	}
	return commit(ctx, tx, ch, bid, changes.KindBranchDeleted, []int64{bid})
}
