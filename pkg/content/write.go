package content

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// writeTx opens a write transaction on a branch given by identifier: the
// branch is resolved before Begin (its id goes into the transaction record)
// and again inside, so a branch deleted meanwhile is ErrNotFound. A branch
// given by id is only resolved inside (an id names that branch or none:
// findBranch), which saves the reads before Begin; a missing one rolls the
// transaction back.
func (s *Service) writeTx(ctx context.Context, branch string, ch Change) (store.Tx, view, error) {
	ident, err := ParseIdent(branch)
	if err != nil {
		return nil, view{}, err
	}
	id := ident.ID
	if ident.Kind != IdentID {
		pre, err := viewOf(ctx, s.st, branch)
		if err != nil {
			return nil, view{}, err
		}
		id = pre.branch
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: ch.user(), Comment: ch.Comment, Branch: id})
	if err != nil {
		return nil, view{}, err
	}
	v, err := viewOf(ctx, tx, strconv.FormatInt(id, 10))
	if err != nil {
		_ = tx.Rollback()
		return nil, view{}, err
	}
	return tx, v, nil
}

// commit appends the change event, runs the caller's ch.InTx and commits.
func commit(ctx context.Context, tx store.Tx, ch Change, branch int64, kind string, ids []int64) (Transaction, error) {
	if err := appendChange(ctx, tx, branch, kind, ids); err != nil {
		return Transaction{}, err
	}
	if ch.InTx != nil {
		if err := ch.InTx(ctx, tx); err != nil {
			return Transaction{}, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Transaction{}, err
	}
	m := tx.Meta()
	return Transaction{ID: m.ID, Time: m.Time, Branch: m.Branch, User: m.User, Comment: m.Comment}, nil
}

// checkUnique fails when a GUID or ApiIdentifier is used by an object other
// than its owner on any branch (ApiIdentifiers are unique installation-wide,
// so resolving one can never depend on the branch), or twice in the request.
func checkUnique(ctx context.Context, r store.Reader, owners map[string]int64, guids, apis []string) error {
	rows, err := r.FindObjectsIn(ctx, nil, guids, apis)
	if err != nil {
		return err
	}
	for _, o := range rows {
		if id, ok := owners["g:"+o.GUID]; ok && id != o.ID && slices.Contains(guids, o.GUID) {
			return invalidf("guid %s is already used by object %d", o.GUID, o.ID)
		}
		if id, ok := owners["a:"+o.APIIdentifier]; ok && id != o.ID && slices.Contains(apis, o.APIIdentifier) {
			return invalidf("apiIdentifier %q is already used by object %d", o.APIIdentifier, o.ID)
		}
	}
	return nil
}

// CreateObjects creates objects on a branch in one transaction and returns
// it with the new ids, in input order. TypeID must name a live type (0
// creates a type); branches are created with CreateBranch.
func (s *Service) CreateObjects(ctx context.Context, branch string, ch Change, in []ObjectInput) (Transaction, []int64, error) {
	if len(in) == 0 {
		return Transaction{}, nil, invalidf("no objects given")
	}
	if err := s.limits.checkObjects(in); err != nil {
		return Transaction{}, nil, err
	}
	if err := s.checkFileRefs(ctx, in); err != nil {
		return Transaction{}, nil, err
	}
	tx, v, err := s.writeTx(ctx, branch, ch)
	if err != nil {
		return Transaction{}, nil, err
	}
	defer func() { _ = tx.Rollback() }()

	typeIDs := make([]int64, 0, len(in))
	known := make([]int64, 0, len(in)+16)
	for _, o := range in {
		typeIDs = append(typeIDs, o.TypeID)
		known = append(known, o.TypeID)
		for _, val := range o.Values {
			known = append(known, val.Attribute)
		}
	}
	// The types and the attributes the values name, in one read (the
	// value checks ask for the attributes again).
	slices.Sort(known)
	vk, err := v.remember(ctx, slices.Compact(known))
	if err != nil {
		return Transaction{}, nil, err
	}
	types, err := vk.objects(ctx, typeIDs)
	if err != nil {
		return Transaction{}, nil, err
	}
	newIDs, err := tx.NewObjectIDs(ctx, len(in))
	if err != nil {
		return Transaction{}, nil, err
	}
	owners := map[string]int64{}
	var guids, apis []string
	objs := make([]store.Object, len(in))
	for i, o := range in {
		t, ok := types[o.TypeID]
		if !ok || t.Deleted || t.TypeID != RootID {
			return Transaction{}, nil, notFoundf("object type %d on branch %d", o.TypeID, v.branch)
		}
		if o.TypeID == TypeBranch {
			return Transaction{}, nil, invalidf("branches are created with POST /branches")
		}
		if err := guardObject(ch, v.branch, newIDs[i], o.TypeID); err != nil {
			return Transaction{}, nil, err
		}
		obj := store.Object{ID: newIDs[i], Branch: v.branch, TypeID: o.TypeID, GUID: newGUID()}
		if o.GUID != "" {
			g, ok := normalizeGUID(o.GUID)
			if !ok {
				return Transaction{}, nil, invalidf("guid %q is not a GUID", o.GUID)
			}
			obj.GUID = g
		}
		if o.APIIdentifier != nil && *o.APIIdentifier != "" {
			if err := checkAPIIdentifier(*o.APIIdentifier); err != nil {
				return Transaction{}, nil, err
			}
			obj.APIIdentifier = *o.APIIdentifier
			if _, dup := owners["a:"+obj.APIIdentifier]; dup {
				return Transaction{}, nil, invalidf("apiIdentifier %q given twice", obj.APIIdentifier)
			}
			owners["a:"+obj.APIIdentifier] = obj.ID
			apis = append(apis, obj.APIIdentifier)
		}
		if _, dup := owners["g:"+obj.GUID]; dup {
			return Transaction{}, nil, invalidf("guid %s given twice", obj.GUID)
		}
		owners["g:"+obj.GUID] = obj.ID
		guids = append(guids, obj.GUID)
		objs[i] = obj
	}
	if err := checkUnique(ctx, tx, owners, guids, apis); err != nil {
		return Transaction{}, nil, err
	}
	inputs := make([][]ValueInput, len(in))
	for i, o := range in {
		inputs[i] = o.Values
	}
	checked, err := vk.validateValues(ctx, ch, inputs)
	if err != nil {
		return Transaction{}, nil, err
	}
	if err := v.checkMultiplicities(ctx, newIDs, typeIDs, checked, true); err != nil {
		return Transaction{}, nil, err
	}
	names, err := userNamesOf(newIDs, typeIDs, checked)
	if err != nil {
		return Transaction{}, nil, err
	}
	for i, id := range newIDs {
		if _, ok := names[id]; typeIDs[i] == TypeUser && !ok {
			return Transaction{}, nil, invalidf("objects[%d]: a user needs a user name (attribute %d)", i, AttrUserName)
		}
	}
	if err := tx.PutObjects(ctx, objs...); err != nil {
		return Transaction{}, nil, err
	}
	var rows []store.Value
	for i, c := range checked {
		for _, k := range c.order {
			rows = append(rows, storeRows(objs[i].ID, v.branch, c.groups[k])...)
		}
	}
	if err := tx.PutValues(ctx, rows...); err != nil {
		return Transaction{}, nil, err
	}
	t, err := commit(ctx, tx, ch, v.branch, changes.KindCreated, newIDs)
	if err != nil {
		return Transaction{}, nil, err
	}
	s.notifyUsers(slices.Contains(typeIDs, TypeUser))
	return t, newIDs, nil
}

// UpdateObjects changes values of existing objects on a branch in one
// transaction. Objects are addressed by ID, else GUID, else ApiIdentifier
// (an ApiIdentifier that names more than one object is ErrAmbiguous).
// Values of attributes
// not sent are unchanged; for a single-valued attribute the sent row
// replaces the stored one; for a multi-valued attribute the sent rows are
// the complete new set of their (attribute, language, variant). A null
// value removes the value (on a child branch it hides the inherited one).
func (s *Service) UpdateObjects(ctx context.Context, branch string, ch Change, in []ObjectInput) (UpdateResult, error) {
	if len(in) == 0 {
		return UpdateResult{}, invalidf("no objects given")
	}
	if err := singleTarget(ch.IfMatch, len(in)); err != nil {
		return UpdateResult{}, err
	}
	if err := s.limits.checkObjects(in); err != nil {
		return UpdateResult{}, err
	}
	if err := s.checkFileRefs(ctx, in); err != nil {
		return UpdateResult{}, err
	}
	tx, v, err := s.writeTx(ctx, branch, ch)
	if err != nil {
		return UpdateResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	created, ids, users, err := v.update(ctx, tx, ch, in, false)
	if err != nil {
		return UpdateResult{}, err
	}
	t, err := commit(ctx, tx, ch, v.branch, changes.KindUpdated, ids)
	if err != nil {
		return UpdateResult{}, err
	}
	s.notifyUsers(users)
	return UpdateResult{UpdatedObjects: len(ids), CreatedValues: created, Transaction: t}, nil
}

// update applies in on v inside tx for ch and returns the number of values
// written, the object ids and whether a user object changed. allowBranch
// permits branch objects.
func (v view) update(ctx context.Context, tx store.Tx, ch Change, in []ObjectInput, allowBranch bool) (int, []int64, bool, error) {
	idents := make([]string, len(in))
	for i, o := range in {
		switch {
		case o.ID > 0:
			idents[i] = strconv.FormatInt(o.ID, 10)
		case o.GUID != "":
			idents[i] = o.GUID
		case o.APIIdentifier != nil && *o.APIIdentifier != "":
			// Addressed by its ApiIdentifier alone: resolved like every
			// identifier, so one that also reads as another object's GUID
			// is ErrAmbiguous (422).
			idents[i] = *o.APIIdentifier
		default:
			return 0, nil, false, invalidf("object %d: meta.id, meta.guid or meta.apiIdentifier is required", i)
		}
	}
	ids, err := v.resolve(ctx, idents)
	if err != nil {
		return 0, nil, false, err
	}
	if ids[0] == RootID || slices.Contains(ids, RootID) {
		return 0, nil, false, invalidf("the root object cannot be changed")
	}
	current, err := v.objects(ctx, ids)
	if err != nil {
		return 0, nil, false, err
	}
	owners := map[string]int64{}
	var apis []string
	var rowsToPut []store.Object
	inputs := make([][]ValueInput, len(in))
	types := make([]int64, len(in))
	for i, o := range in {
		cur, changed := current[ids[i]], false
		if cur.TypeID == TypeBranch && !allowBranch {
			return 0, nil, false, invalidf("object %d is a branch: use PATCH /branches/%d", cur.ID, cur.ID)
		}
		if err := guardObject(ch, v.branch, cur.ID, cur.TypeID); err != nil {
			return 0, nil, false, err
		}
		if err := checkProtected(cur.ID, cur.APIIdentifier, o); err != nil {
			return 0, nil, false, err
		}
		types[i] = cur.TypeID
		if o.TypeID != 0 && o.TypeID != cur.TypeID {
			return 0, nil, false, invalidf("object %d has type %d: the type cannot change to %d", cur.ID, cur.TypeID, o.TypeID)
		}
		if o.APIIdentifier != nil && *o.APIIdentifier != cur.APIIdentifier && *o.APIIdentifier != "" {
			if cur.APIIdentifier != "" {
				return 0, nil, false, fmt.Errorf("%w: the apiIdentifier of object %d is %q and cannot change", ErrForbidden, cur.ID, cur.APIIdentifier)
			}
			if err := checkAPIIdentifier(*o.APIIdentifier); err != nil {
				return 0, nil, false, err
			}
			if _, dup := owners["a:"+*o.APIIdentifier]; dup {
				return 0, nil, false, invalidf("apiIdentifier %q given twice", *o.APIIdentifier)
			}
			owners["a:"+*o.APIIdentifier] = cur.ID
			apis = append(apis, *o.APIIdentifier)
			cur.Branch, cur.APIIdentifier = v.branch, *o.APIIdentifier
			changed = true
		}
		if o.Deleted != nil {
			if *o.Deleted {
				return 0, nil, false, invalidf("object %d: meta.deleted true: delete objects with DELETE /branches/%d/objects", cur.ID, v.branch)
			}
			if cur.Deleted {
				// Restore: the object row live again on this branch (a
				// tombstone of an inherited object becomes a live row).
				cur.Branch, cur.Deleted = v.branch, false
				changed = true
			}
		}
		if changed {
			rowsToPut = append(rowsToPut, cur)
		}
		inputs[i] = o.Values
	}
	if err := singleTarget(ch.IfMatch, len(ids)); err != nil {
		return 0, nil, false, err
	}
	if err := v.checkObject(ctx, ch.IfMatch, ids[0], allowBranch); err != nil {
		return 0, nil, false, err
	}
	if len(apis) > 0 {
		if err := checkUnique(ctx, tx, owners, nil, apis); err != nil {
			return 0, nil, false, err
		}
	}
	if len(rowsToPut) > 0 {
		if err := tx.PutObjects(ctx, rowsToPut...); err != nil {
			return 0, nil, false, err
		}
	}
	checked, err := v.validateValues(ctx, ch, inputs)
	if err != nil {
		return 0, nil, false, err
	}
	if err := v.checkMultiplicities(ctx, ids, types, checked, false); err != nil {
		return 0, nil, false, err
	}
	if _, err := userNamesOf(ids, types, checked); err != nil {
		return 0, nil, false, err
	}
	child := len(v.chain) > 1
	created := 0
	var put []store.Value
	for i, c := range checked {
		id := ids[i]
		for _, k := range c.order {
			g := c.groups[k]
			rows := storeRows(id, v.branch, g)
			exact := store.ValueFilter{AttributeIDs: []int64{k.attr}, Languages: []int64{k.lang}, Variants: []int64{k.variant}}
			if c.defs[k.attr].multi || len(rows) == 0 {
				// The sent rows are the whole group: drop the old ones first.
				if _, err := tx.DeleteValues(ctx, v.branch, []int64{id}, exact); err != nil {
					return 0, nil, false, err
				}
			}
			if len(rows) == 0 && child && !inherits(g) {
				// Hide the inherited group on this branch.
				rows = []store.Value{{ObjectID: id, Branch: v.branch, AttributeID: k.attr, Language: k.lang,
					Variant: k.variant, JSON: []byte("null")}}
			} else {
				created += len(rows)
			}
			put = append(put, rows...)
		}
	}
	if err := tx.PutValues(ctx, put...); err != nil {
		return 0, nil, false, err
	}
	return created, ids, slices.Contains(types, TypeUser), nil
}

// DeleteObjects soft-deletes objects of a branch (ID, GUID or
// ApiIdentifier) in one transaction and returns how many were live before.
// System objects and branches cannot be deleted here (ErrInvalid). On a
// child branch an inherited object gets a tombstone there; the parent still
// sees it.
func (s *Service) DeleteObjects(ctx context.Context, branch string, ch Change, idents []string) (int, Transaction, error) {
	if len(idents) == 0 {
		return 0, Transaction{}, invalidf("no objectIds given")
	}
	if err := singleTarget(ch.IfMatch, len(idents)); err != nil {
		return 0, Transaction{}, err
	}
	tx, v, err := s.writeTx(ctx, branch, ch)
	if err != nil {
		return 0, Transaction{}, err
	}
	defer func() { _ = tx.Rollback() }()
	ids, err := v.resolve(ctx, idents)
	if err != nil {
		return 0, Transaction{}, err
	}
	current, err := v.objects(ctx, ids)
	if err != nil {
		return 0, Transaction{}, err
	}
	var local []int64
	var tombstones []store.Object
	seen := map[int64]bool{}
	n, users := 0, false
	for _, id := range ids {
		cur := current[id]
		switch {
		case isSystemID(id):
			return 0, Transaction{}, invalidf("object %d is a protected system object", id)
		case cur.TypeID == TypeBranch:
			return 0, Transaction{}, invalidf("object %d is a branch: use DELETE /branches/%d", id, id)
		}
		if err := guardObject(ch, v.branch, id, cur.TypeID); err != nil {
			return 0, Transaction{}, err
		}
		if err := v.checkObject(ctx, ch.IfMatch, id, false); err != nil {
			return 0, Transaction{}, err
		}
		users = users || cur.TypeID == TypeUser
		if seen[id] || cur.Deleted {
			continue
		}
		seen[id] = true
		n++
		if cur.Branch == v.branch {
			local = append(local, id)
		} else {
			cur.Branch, cur.Deleted = v.branch, true
			tombstones = append(tombstones, cur)
		}
	}
	if _, err := tx.DeleteObjects(ctx, v.branch, local); err != nil {
		return 0, Transaction{}, err
	}
	if err := tx.PutObjects(ctx, tombstones...); err != nil {
		return 0, Transaction{}, err
	}
	t, err := commit(ctx, tx, ch, v.branch, changes.KindDeleted, ids)
	if err != nil {
		return 0, Transaction{}, err
	}
	s.notifyUsers(users)
	return n, t, nil
}
