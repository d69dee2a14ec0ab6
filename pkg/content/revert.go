package content

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// MaxRevertObjects caps the objects of one revert.
const MaxRevertObjects = 100

// RevertInput says what RevertObjects restores.
type RevertInput struct {
	// Objects are ID, GUID or ApiIdentifier of the objects, 1..MaxRevertObjects.
	Objects []string
	// Transaction is the transaction whose state the objects get back.
	Transaction int64
	// Attributes, when given (ID, GUID or ApiIdentifier of attributes),
	// restore only those attributes' values; the object row (deleted or
	// not) is then left as it is. Empty = the whole object.
	Attributes []string
}

// RevertResult is what a revert wrote.
type RevertResult struct {
	// RevertedObjects counts the objects whose row or values changed.
	RevertedObjects int
	Transaction     Transaction
}

// RevertObjects restores objects of a branch to the state transaction
// in.Transaction left them in, in one new transaction whose comment says
// what it reverted (after ch.Comment if given). It restores what is stored
// on the branch itself: the values of every (attribute, language,
// variant) group — or of in.Attributes only — become the rows the branch
// held then (groups it had no rows for lose theirs, so they inherit
// again), and without in.Attributes a deleted object is restored (or a
// then-deleted one deleted). The versions in between are kept: the
// history lists them and the revert. The values are restored as stored,
// without the write checks of UpdateObjects (they passed them when they
// were written). An object that had no row on the branch's chain then is
// ErrNotFound; branches and users are not reverted (ErrInvalid), secret
// attributes (model.SecretAttribute) are never touched.
func (s *Service) RevertObjects(ctx context.Context, branch string, ch Change, in RevertInput) (RevertResult, error) {
	switch {
	case len(in.Objects) == 0:
		return RevertResult{}, invalidf("no objects given")
	case len(in.Objects) > MaxRevertObjects:
		return RevertResult{}, invalidf("%d objects given, at most %d are reverted at once", len(in.Objects), MaxRevertObjects)
	}
	if err := singleTarget(ch.IfMatch, len(in.Objects)); err != nil {
		return RevertResult{}, err
	}
	if err := s.checkAsOf(ctx, in.Transaction); err != nil {
		return RevertResult{}, err
	}
	pre, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return RevertResult{}, err
	}
	ids, err := pre.resolve(ctx, in.Objects)
	if err != nil {
		return RevertResult{}, err
	}
	ids = uniqueIDs(ids)
	attrs, err := pre.attributeIDs(ctx, in.Attributes)
	if err != nil {
		return RevertResult{}, err
	}
	ch.Comment = revertComment(ch.Comment, ids, in.Transaction, attrs)
	tx, v, err := s.writeTx(ctx, branch, ch)
	if err != nil {
		return RevertResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	n, err := s.revert(ctx, tx, v, ch, ids, in.Transaction, attrs)
	if err != nil {
		return RevertResult{}, err
	}
	t, err := commit(ctx, tx, ch, v.branch, changes.KindUpdated, ids)
	if err != nil {
		return RevertResult{}, err
	}
	return RevertResult{RevertedObjects: n, Transaction: t}, nil
}

// revert writes the rows of ids on v as transaction then left them and
// returns how many objects changed.
func (s *Service) revert(ctx context.Context, tx store.Tx, v view, ch Change, ids []int64, then int64, attrs []int64) (int, error) {
	now, err := v.objects(ctx, ids)
	if err != nil {
		return 0, err
	}
	old, err := v.asOf(s.st, then).objects(ctx, ids)
	if err != nil {
		return 0, err
	}
	var rows []store.Object
	changed := map[int64]bool{}
	for _, id := range ids {
		cur, was := now[id], old[id]
		if _, ok := old[id]; !ok {
			return 0, notFoundf("object %d did not exist on branch %d after transaction %d", id, v.branch, then)
		}
		switch {
		case isSystemID(id) && len(attrs) == 0 && cur.Deleted != was.Deleted:
			return 0, invalidf("object %d is a protected system object", id)
		case cur.TypeID == TypeBranch:
			return 0, invalidf("object %d is a branch: branches are not reverted", id)
		case cur.TypeID == TypeUser:
			return 0, invalidf("object %d is a user: users are not reverted", id)
		}
		if err := guardObject(ch, v.branch, id, cur.TypeID); err != nil {
			return 0, err
		}
		if err := v.checkObject(ctx, ch.IfMatch, id, false); err != nil {
			return 0, err
		}
		if len(attrs) == 0 && cur.Deleted != was.Deleted {
			// The row on this branch takes the deleted state of then; the
			// GUID and ApiIdentifier stay (an ApiIdentifier never changes
			// once set).
			cur.Branch, cur.Deleted = v.branch, was.Deleted
			rows = append(rows, cur)
			changed[id] = true
		}
	}
	if err := tx.PutObjects(ctx, rows...); err != nil {
		return 0, err
	}
	f := store.ValueFilter{AttributeIDs: attrs}
	curVals, err := tx.ListValues(ctx, v.branch, ids, f)
	if err != nil {
		return 0, err
	}
	oldVals, err := s.st.ValuesAsOf(ctx, []int64{v.branch}, ids, then)
	if err != nil {
		return 0, err
	}
	type objGroup struct {
		id int64
		k  groupKey
	}
	groups := map[objGroup][2][]store.Value{} // [now, then]
	var order []objGroup
	add := func(side int, vals []store.Value) {
		for _, val := range vals {
			if model.SecretAttribute(val.AttributeID) || (len(attrs) > 0 && !slices.Contains(attrs, val.AttributeID)) {
				continue
			}
			g := objGroup{val.ObjectID, groupKey{val.AttributeID, val.Language, val.Variant}}
			pair, seen := groups[g]
			if !seen {
				order = append(order, g)
			}
			val.Branch, val.ModifiedTx = v.branch, 0
			pair[side] = append(pair[side], val)
			groups[g] = pair
		}
	}
	add(0, curVals)
	add(1, oldVals)
	var put []store.Value
	for _, g := range order {
		pair := groups[g]
		if sameRows(pair[0], pair[1]) {
			continue
		}
		// A system object's protected values never change, a revert
		// included (the rule of every write path, protect.go).
		if err := checkProtected(g.id, now[g.id].APIIdentifier, ObjectInput{Values: []ValueInput{{Attribute: g.k.attr}}}); err != nil {
			return 0, err
		}
		exact := store.ValueFilter{AttributeIDs: []int64{g.k.attr}, Languages: []int64{g.k.lang}, Variants: []int64{g.k.variant}}
		if _, err := tx.DeleteValues(ctx, v.branch, []int64{g.id}, exact); err != nil {
			return 0, err
		}
		put = append(put, pair[1]...)
		changed[g.id] = true
	}
	if err := tx.PutValues(ctx, put...); err != nil {
		return 0, err
	}
	return len(changed), nil
}

// sameRows reports whether two stored groups hold the same rows (both in
// sort key order, as the store reads them).
func sameRows(a, b []store.Value) bool {
	return sameValues(groupValues(byKey(a)), groupValues(byKey(b)))
}

func byKey(vals []store.Value) map[int64]store.Value {
	m := make(map[int64]store.Value, len(vals))
	for _, val := range vals {
		m[val.SortReverse] = val
	}
	return m
}

// attributeIDs resolves attribute identifiers on v; each must name an
// attribute (an object of TypeAttribute).
func (v view) attributeIDs(ctx context.Context, idents []string) ([]int64, error) {
	if len(idents) == 0 {
		return nil, nil
	}
	ids, err := v.resolve(ctx, idents)
	if err != nil {
		return nil, err
	}
	rows, err := v.objects(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if rows[id].TypeID != TypeAttribute {
			return nil, invalidf("%q is not an attribute", idents[i])
		}
	}
	return uniqueIDs(ids), nil
}

// uniqueIDs drops repeated ids, keeping the first of each.
func uniqueIDs(ids []int64) []int64 {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// revertComment is the comment of a revert's transaction: what it
// reverted, after the caller's comment if any.
func revertComment(comment string, ids []int64, tx int64, attrs []int64) string {
	list := func(ids []int64) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatInt(id, 10)
		}
		return strings.Join(s, ", ")
	}
	what := "reverted object "
	if len(ids) > 1 {
		what = "reverted objects "
	}
	what += list(ids) + " to transaction " + strconv.FormatInt(tx, 10)
	if len(attrs) > 0 {
		what += " (attributes " + list(attrs) + ")"
	}
	if comment == "" {
		return strings.ToUpper(what[:1]) + what[1:]
	}
	return comment + " [" + what + "]"
}
