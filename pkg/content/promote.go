package content

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// Limits of a promote.
const (
	// MaxPromoteObjects caps the objects one promote moves: a promote is
	// one write transaction, which holds the store's write lock.
	MaxPromoteObjects = 50000
	// MaxPromoteSelection caps the object identifiers a request selects.
	MaxPromoteSelection = 1000
	// MaxPromoteConflictsListed caps the conflicts a promote answers.
	MaxPromoteConflictsListed = 100
	// promoteBatch is how many objects are compared per read.
	promoteBatch = 500
)

// Conflict policies of a promote.
const (
	ConflictsRefuse     = "refuse"      // any conflict refuses the promote (the default)
	ConflictsChildWins  = "child-wins"  // the child's value replaces the parent's
	ConflictsParentWins = "parent-wins" // the parent's value stays, the child's is dropped
)

// ErrPromoteConflicts is the error of a promote with the refuse policy that met conflicts.
var ErrPromoteConflicts = errkind.New(errkind.Unprocessable, "the promote has conflicts")

// PromoteInput says what PromoteBranch moves.
type PromoteInput struct {
	// Objects selects objects (ID, GUID or ApiIdentifier on the child);
	// empty = everything the child holds of its own.
	Objects []string
	// Conflicts is the policy (ConflictsRefuse, …; "" = refuse).
	Conflicts string
	// DryRun computes the answer without writing.
	DryRun bool
}

// PromoteResult is what a promote wrote (or, dry, would write).
type PromoteResult struct {
	DryRun                    bool
	Parent                    int64
	Objects                   int // objects moved to the parent
	Created, Deleted, Updated int
	// ByType counts the objects moved per type id.
	ByType        map[int64]int
	ConflictCount int
	// Conflicts are the first MaxPromoteConflictsListed conflicting
	// objects with their values.
	Conflicts []ObjectDiff
	// Transaction is the promote's transaction; nil when nothing was
	// written (a dry run, or nothing to promote: a promote applied twice).
	Transaction *Transaction
}

// PromoteBranch applies what the child branch holds of its own (or the
// selected objects of it) to its parent in one transaction on the
// parent, with one change event, and removes it from the child, so the
// child inherits it: created objects move, deletions and restores apply
// to the parent's row, and every overridden value group replaces the
// parent's. A conflict (BranchDiff) refuses the promote
// (ErrPromoteConflicts) unless in.Conflicts says who wins. A promote
// with nothing to move writes nothing. The caller needs a write grant on
// the parent (the child's is the transport's): ErrForbidden otherwise;
// objects of the security model and webhooks as for every write.
func (s *Service) PromoteBranch(ctx context.Context, branch string, ch Change, in PromoteInput) (PromoteResult, error) {
	switch in.Conflicts {
	case "":
		in.Conflicts = ConflictsRefuse
	case ConflictsRefuse, ConflictsChildWins, ConflictsParentWins:
	default:
		return PromoteResult{}, invalidf("conflicts must be %s, %s or %s", ConflictsRefuse, ConflictsChildWins, ConflictsParentWins)
	}
	if len(in.Objects) > MaxPromoteSelection {
		return PromoteResult{}, invalidf("%d objects selected, at most %d", len(in.Objects), MaxPromoteSelection)
	}
	child, parent, err := childAndParent(ctx, s.st, branch)
	if err != nil {
		return PromoteResult{}, err
	}
	if ch.Caller == nil || !ch.Caller.Allowed(auth.AccessWrite, parent.chain) {
		return PromoteResult{}, forbiddenf("promoting branch %d needs a write grant on its parent %d", child.branch, parent.branch)
	}
	if ch.Comment == "" {
		ch.Comment = "Promoted branch " + strconv.FormatInt(child.branch, 10)
	}
	tx, pv, err := s.writeTx(ctx, strconv.FormatInt(parent.branch, 10), ch)
	if err != nil {
		return PromoteResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	cv, again, err := childAndParent(ctx, tx, strconv.FormatInt(child.branch, 10))
	if err != nil {
		return PromoteResult{}, err
	}
	if again.branch != pv.branch {
		return PromoteResult{}, invalidf("the parent of branch %d changed meanwhile", child.branch)
	}
	ids, err := s.promotedIDs(ctx, cv, in.Objects)
	if err != nil {
		return PromoteResult{}, err
	}
	res := PromoteResult{DryRun: in.DryRun, Parent: pv.branch, Conflicts: []ObjectDiff{}, ByType: map[int64]int{}}
	var all []ObjectDiff
	for chunk := range slices.Chunk(ids, promoteBatch) {
		diffs, err := s.diffObjects(ctx, cv, pv, chunk)
		if err != nil {
			return PromoteResult{}, err
		}
		all = append(all, diffs...)
	}
	for _, d := range all {
		res.ByType[d.Type]++
		switch d.Kind {
		case DiffCreated:
			res.Created++
		case DiffDeleted:
			res.Deleted++
		default:
			res.Updated++
		}
		if d.Conflict {
			res.ConflictCount++
			if len(res.Conflicts) < MaxPromoteConflictsListed {
				res.Conflicts = append(res.Conflicts, d)
			}
		}
	}
	res.Objects = len(all)
	if res.ConflictCount > 0 && in.Conflicts == ConflictsRefuse && !in.DryRun {
		return res, fmt.Errorf("%w: %s: choose conflicts child-wins or parent-wins, or resolve them", ErrPromoteConflicts, conflictSummary(all))
	}
	if in.DryRun || len(all) == 0 {
		return res, nil
	}
	if err := s.applyPromote(ctx, tx, ch, cv, pv, all, in.Conflicts == ConflictsParentWins); err != nil {
		return PromoteResult{}, err
	}
	t, err := commit(ctx, tx, ch, pv.branch, changes.KindUpdated, ids)
	if err != nil {
		return PromoteResult{}, err
	}
	res.Transaction = &t
	return res, nil
}

// promotedIDs is the selection resolved on the child (each must be one
// the child holds something of), or everything the child holds, at most
// MaxPromoteObjects.
func (s *Service) promotedIDs(ctx context.Context, cv view, selection []string) ([]int64, error) {
	if len(selection) > 0 {
		ids, err := cv.resolve(ctx, selection)
		if err != nil {
			return nil, err
		}
		ids = uniqueIDs(ids)
		slices.Sort(ids)
		return ids, nil
	}
	ids, err := cv.r.ListBranchObjectIDs(ctx, cv.branch, 0, MaxPromoteObjects+1)
	if err != nil {
		return nil, err
	}
	if len(ids) > MaxPromoteObjects {
		return nil, invalidf("branch %d holds more than %d objects of its own: promote a selection", cv.branch, MaxPromoteObjects)
	}
	return ids, nil
}

// applyPromote writes diffs (of cv against pv) to pv's branch and removes
// them from cv's; with parentWins the conflicting parts are dropped from
// the child without touching the parent.
func (s *Service) applyPromote(ctx context.Context, tx store.Tx, ch Change, cv, pv view, diffs []ObjectDiff, parentWins bool) error {
	var rows []store.Object
	var put []store.Value
	var withRow, ids, created []int64
	createdTypes := map[int64]bool{}
	own, err := tx.GetObjects(ctx, cv.branch, idsOf(diffs))
	if err != nil {
		return err
	}
	childRows := map[int64]store.Object{}
	for _, o := range own {
		childRows[o.ID] = o
		withRow = append(withRow, o.ID)
	}
	childVals, err := tx.ListValues(ctx, cv.branch, idsOf(diffs), store.ValueFilter{})
	if err != nil {
		return err
	}
	parentOwn, err := tx.ListValues(ctx, pv.branch, idsOf(diffs), store.ValueFilter{})
	if err != nil {
		return err
	}
	ownGroups := map[objGroupKey]bool{}
	for _, v := range parentOwn {
		ownGroups[objGroupKey{v.ObjectID, groupKey{v.AttributeID, v.Language, v.Variant}}] = true
	}
	byGroup := map[objGroupKey][]store.Value{}
	for _, v := range childVals {
		k := objGroupKey{v.ObjectID, groupKey{v.AttributeID, v.Language, v.Variant}}
		byGroup[k] = append(byGroup[k], v)
	}
	// The parent's groups the promote replaces, per (attribute, language,
	// variant): one delete per group key and chunk of objects, not one per
	// object (a release of 5,000 edited titles is one statement per 500).
	replaced := map[groupKey][]int64{}
	for _, d := range diffs {
		ids = append(ids, d.Object)
		if err := guardObject(ch, pv.branch, d.Object, d.Type); err != nil {
			return err
		}
		if c, ok := childRows[d.Object]; ok && !(parentWins && d.RowConflict) && d.Kind != DiffUpdated {
			if isSystemID(d.Object) {
				return invalidf("object %d is a protected system object", d.Object)
			}
			c.Branch = pv.branch
			rows = append(rows, c)
			if d.Kind == DiffCreated {
				created = append(created, d.Object)
				if c.TypeID == RootID {
					createdTypes[d.Object] = true
				}
			}
		}
		for _, vd := range d.Changes {
			if parentWins && vd.Conflict {
				continue
			}
			k := objGroupKey{d.Object, groupKey{vd.Attribute, vd.Language, vd.Variant}}
			if isSystemID(d.Object) {
				if err := checkProtected(d.Object, d.APIIdentifier, ObjectInput{Values: []ValueInput{{Attribute: vd.Attribute}}}); err != nil {
					return err
				}
			}
			if ownGroups[k] {
				replaced[k.k] = append(replaced[k.k], d.Object)
			}
			for _, v := range byGroup[k] {
				// A null row hides an inherited value; the default branch
				// inherits nothing, so there it is no row at all.
				if pv.branch == BranchDefault && model.IsNull(v.JSON) {
					continue
				}
				v.Branch, v.ModifiedTx = pv.branch, 0
				put = append(put, v)
			}
		}
	}
	if err := deleteGroups(ctx, tx, pv.branch, replaced); err != nil {
		return err
	}
	if err := tx.PutObjects(ctx, rows...); err != nil {
		return err
	}
	for chunk := range slices.Chunk(put, promoteBatch) {
		if err := tx.PutValues(ctx, chunk...); err != nil {
			return err
		}
	}
	if err := s.checkPromotedTypes(ctx, pv, childRows, created); err != nil {
		return err
	}
	if _, err := tx.PurgeObjects(ctx, cv.branch, withRow); err != nil {
		return err
	}
	_, err = tx.DeleteValues(ctx, cv.branch, ids, store.ValueFilter{})
	return err
}

// deleteGroups removes on branch the value group k of every object of
// groups[k], in a stable order.
func deleteGroups(ctx context.Context, tx store.Tx, branch int64, groups map[groupKey][]int64) error {
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.attr, b.attr), cmp.Compare(a.lang, b.lang), cmp.Compare(a.variant, b.variant))
	})
	for _, k := range keys {
		exact := store.ValueFilter{AttributeIDs: []int64{k.attr}, Languages: []int64{k.lang}, Variants: []int64{k.variant}}
		for chunk := range slices.Chunk(groups[k], promoteBatch) {
			if _, err := tx.DeleteValues(ctx, branch, chunk, exact); err != nil {
				return err
			}
		}
	}
	return nil
}

// objGroupKey is a value group of one object.
type objGroupKey struct {
	id int64
	k  groupKey
}

// checkPromotedTypes fails when an object the promote created on the
// parent has a type the parent does not have (created on the child and
// not promoted with it).
func (s *Service) checkPromotedTypes(ctx context.Context, pv view, childRows map[int64]store.Object, created []int64) error {
	var types []int64
	for _, id := range created {
		if t := childRows[id].TypeID; t != RootID && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	got, err := pv.objects(ctx, types)
	if err != nil {
		return err
	}
	for _, t := range types {
		if o, ok := got[t]; !ok || o.Deleted {
			return invalidf("type %d of a promoted object is not on the parent branch %d: promote the type too", t, pv.branch)
		}
	}
	return nil
}

func idsOf(diffs []ObjectDiff) []int64 {
	ids := make([]int64, len(diffs))
	for i, d := range diffs {
		ids[i] = d.Object
	}
	return ids
}
