package content

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/store"
)

// projection is a ReadOptions with the filters resolved to ids.
type projection struct {
	inherited                       bool
	attributes, languages, variants map[int64]bool // nil = no filter
}

// project resolves the filter identifiers of o on v. Language and variant
// filters always keep language-independent (0) and variant-less (0) values
// (inferred: the filters narrow the specific values).
func (v view) project(ctx context.Context, o ReadOptions) (projection, error) {
	p := projection{inherited: o.Inherited}
	set := func(idents []string, keepZero bool) (map[int64]bool, error) {
		if len(idents) == 0 {
			return nil, nil
		}
		var named []string
		m := map[int64]bool{}
		if keepZero {
			m[0] = true
		}
		for _, s := range idents {
			if id, err := ParseIdent(s); err == nil && id.Kind == IdentID && id.ID == 0 {
				m[0] = true
				continue
			}
			named = append(named, s)
		}
		ids, err := v.resolve(ctx, named)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			m[id] = true
		}
		return m, nil
	}
	var err error
	if p.attributes, err = set(o.Attributes, false); err != nil {
		return p, err
	}
	if p.languages, err = set(o.Languages, true); err != nil {
		return p, err
	}
	if p.variants, err = set(o.Variants, true); err != nil {
		return p, err
	}
	return p, nil
}

func (p projection) keep(val store.Value) bool {
	return (p.attributes == nil || p.attributes[val.AttributeID]) &&
		(p.languages == nil || p.languages[val.Language]) &&
		(p.variants == nil || p.variants[val.Variant])
}

// build reads ids (which must exist) with their values: two queries.
func (v view) build(ctx context.Context, ids []int64, p projection) ([]Object, error) {
	objs, err := v.objects(ctx, ids)
	if err != nil {
		return nil, err
	}
	vs, err := v.values(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(ids))
	for _, id := range ids {
		row, ok := objs[id]
		if !ok {
			return nil, notFoundf("object %d on branch %d", id, v.branch)
		}
		o := Object{ID: row.ID, GUID: row.GUID, APIIdentifier: row.APIIdentifier, TypeID: row.TypeID, Deleted: row.Deleted}
		if row.Branch == v.branch {
			o.LastTransaction = row.ModifiedTx
		}
		if last, ok := vs.lastLocal[id]; ok {
			o.LastTransaction = max(o.LastTransaction, last)
		}
		o.Version = max(row.ModifiedTx, vs.newest[id])
		src := vs.local[id]
		if p.inherited {
			src = vs.effective[id]
		}
		o.Values = []Value{}
		for _, val := range src {
			if p.keep(val) && !model.SecretAttribute(val.AttributeID) {
				o.Values = append(o.Values, Value{Attribute: val.AttributeID, Language: val.Language,
					Variant: val.Variant, SortReverse: val.SortReverse, UnitRef: val.UnitRef, JSON: val.JSON})
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// GetObject reads one object of a branch by ID, GUID or ApiIdentifier.
// Deleted objects are returned with Deleted set.
func (s *Service) GetObject(ctx context.Context, branch, id string, o ReadOptions) (Object, error) {
	objs, err := s.GetObjects(ctx, branch, []string{id}, o)
	if err != nil {
		return Object{}, err
	}
	return objs[0], nil
}

// GetObjects reads objects of a branch in the order of ids. Any unknown id
// is ErrNotFound; an empty list is ErrInvalid.
func (s *Service) GetObjects(ctx context.Context, branch string, ids []string, o ReadOptions) ([]Object, error) {
	if len(ids) == 0 {
		return nil, invalidf("ids is required")
	}
	if o.AsOf != 0 {
		if err := s.checkAsOf(ctx, o.AsOf); err != nil {
			return nil, err
		}
	}
	v, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return nil, err
	}
	p, err := v.project(ctx, o)
	if err != nil {
		return nil, err
	}
	resolved, err := v.resolveSome(ctx, ids, o.SkipMissing)
	if err != nil {
		return nil, err
	}
	if o.Caller != nil && !o.Caller.Admin {
		rows, err := v.objects(ctx, resolved)
		if err != nil {
			return nil, err
		}
		for i, id := range resolved {
			if rows[id].TypeID == TypeUser && o.hidesUser(id) {
				if o.SkipMissing {
					resolved[i] = missingID
					continue
				}
				return nil, notFoundf("object %q", ids[i]) //nolint:gosec // resolved has one entry per id
			}
		}
	}
	if o.AsOf != 0 {
		if v, err = s.existedAsOf(ctx, v, resolved, o); err != nil {
			return nil, err
		}
	}
	if o.SkipMissing {
		resolved = slices.DeleteFunc(resolved, func(id int64) bool { return id == missingID })
		if len(resolved) == 0 {
			return []Object{}, nil
		}
	}
	return v.build(ctx, resolved, p)
}

// GetTypedObjects pages through the objects of a type visible on a branch,
// in id order. typ must name a type (an object of the meta-type 0).
// With q.AsOf the page holds the objects of the type that existed then,
// as they were (deleted as they were then); objects purged since are gone.
func (s *Service) GetTypedObjects(ctx context.Context, branch, typ string, q ListQuery) (Page, error) {
	if q.AsOf != 0 {
		if err := s.checkAsOf(ctx, q.AsOf); err != nil {
			return Page{}, err
		}
	}
	v, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return Page{}, err
	}
	ids, err := v.resolve(ctx, []string{typ})
	if err != nil {
		return Page{}, err
	}
	t, err := v.objects(ctx, ids)
	if err != nil {
		return Page{}, err
	}
	if t[ids[0]].TypeID != RootID {
		return Page{}, invalidf("%q is not an object type", typ)
	}
	if ids[0] == TypeUser && q.Caller != nil && !q.Caller.Admin {
		return s.ownUser(ctx, v, q)
	}
	return v.list(ctx, "typed", ids[0], q, s.st)
}

// ownUser is the user list of a caller who is no administrator: one page
// with at most its own user object.
func (s *Service) ownUser(ctx context.Context, v view, q ListQuery) (Page, error) {
	if _, err := takeOf(q.Take); err != nil {
		return Page{}, err
	}
	self := q.Caller.UserID
	if self == 0 || q.Continue != "" {
		return Page{Objects: []Object{}}, nil
	}
	rows, err := v.objects(ctx, []int64{self})
	if err != nil {
		return Page{}, err
	}
	row, ok := rows[self]
	if !ok || row.TypeID != TypeUser || (q.Deleted != nil && row.Deleted != *q.Deleted) {
		return Page{Objects: []Object{}}, nil
	}
	p, err := v.project(ctx, q.ReadOptions)
	if err != nil {
		return Page{}, err
	}
	if q.AsOf != 0 {
		then, err := v.asOf(s.st, q.AsOf).objects(ctx, []int64{self})
		if row, ok := then[self]; err != nil || !ok || (q.Deleted != nil && row.Deleted != *q.Deleted) {
			return Page{Objects: []Object{}}, err
		}
		v = v.asOf(s.st, q.AsOf)
	}
	objs, err := v.build(ctx, []int64{self}, p)
	return Page{Objects: objs}, err
}

// list pages through the objects of type typ on v; with q.AsOf (h reads
// the history) through those that existed then, as they were.
func (v view) list(ctx context.Context, kind string, typ int64, q ListQuery, h store.History) (Page, error) {
	take, err := takeOf(q.Take)
	if err != nil {
		return Page{}, err
	}
	scope := listScope(kind, v.branch, typ, q.Deleted)
	after, err := decodeToken(q.Continue, scope)
	if err != nil {
		return Page{}, err
	}
	p, err := v.project(ctx, q.ReadOptions)
	if err != nil {
		return Page{}, err
	}
	var ids []int64
	for len(ids) <= take {
		rows, err := v.r.ListObjectsIn(ctx, v.chain, store.ObjectQuery{TypeIDs: []int64{typ}, AfterID: after, Limit: take + 1})
		if err != nil {
			return Page{}, err
		}
		if len(rows) == 0 {
			break
		}
		eff := v.pick(rows)
		var batch []int64
		for id := range eff {
			batch = append(batch, id)
		}
		slices.Sort(batch)
		if q.AsOf != 0 {
			// The same ids as they were then; those created since are left out.
			if eff, err = v.asOf(h, q.AsOf).objects(ctx, batch); err != nil {
				return Page{}, err
			}
		}
		for _, id := range batch {
			if row, ok := eff[id]; ok && (q.Deleted == nil || row.Deleted == *q.Deleted) {
				ids = append(ids, id)
			}
		}
		after = batch[len(batch)-1]
		if len(batch) < take+1 {
			break
		}
	}
	page := Page{}
	if len(ids) > take {
		ids = ids[:take]
		page.Continue = encodeToken(ids[take-1], scope)
	}
	if q.AsOf != 0 {
		v = v.asOf(h, q.AsOf)
	}
	if page.Objects, err = v.build(ctx, ids, p); err != nil {
		return Page{}, err
	}
	return page, nil
}

// takeOf reads a list's take by the shared rule (params.Take: 1..MaxTake);
// 0 = not sent (DefaultTake). Transports that know whether take was sent
// call params.Take themselves, so a sent 0 is refused too.
func takeOf(take int) (int, error) {
	var v *int32
	if take != 0 {
		t := int32(min(max(take, math.MinInt32), math.MaxInt32))
		v = &t
	}
	n, err := params.Take("take", v, DefaultTake, MaxTake)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return n, nil
}
