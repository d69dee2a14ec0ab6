package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery/query"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Request holds the parameters shared by the object operations. Type is
// empty for the untyped operations.
type Request struct {
	Branch   string
	Type     string
	Lang     string
	Variants string
	// Resolve names reference attributes (ApiIdentifiers, comma separated)
	// whose targets go into refs; unknown names are ignored.
	Resolve      string
	ResolveDepth *int32
	// ResolveReverse names reference attributes (ApiIdentifiers, comma
	// separated) resolved in reverse, up to ResolveReverseDepth levels;
	// ResolveUnits renders values' units and resolves the unit objects.
	// See resolve.go, reverse.go and units.go.
	ResolveReverse string
	ResolveUnits   bool
	Filter         string
	Sort           string
	Deleted        bool
	Props          int32
	Skip, Take     int64

	// ResolveReverseDepth bounds the levels of ResolveReverse (nil =
	// DefaultResolveDepth).
	ResolveReverseDepth *int32

	// sortCap overrides MaxSortMatches (tests only; 0 = MaxSortMatches).
	sortCap int
}

// List is a page of objects with their resolved references.
type List struct {
	Skip, Count int
	More        bool
	Objs, Refs  []Object
	// Tags are the cache tags of the response (see ModelTag).
	Tags []string
}

// Single is one object with its resolved references.
type Single struct {
	Obj  Object
	Refs []Object
	// Tags are the cache tags of the response (see ModelTag).
	Tags []string
}

// scope is a request resolved against the index.
type scope struct {
	branch int64
	m      *branchModel
	typ    *objType
	view   view
}

func (s *Service) scope(ctx context.Context, r Request) (*scope, error) {
	if _, err := resolveDepth(r.ResolveDepth, "resolveDepth"); err != nil {
		return nil, err
	}
	if _, err := resolveDepth(r.ResolveReverseDepth, "resolveReverseDepth"); err != nil {
		return nil, err
	}
	ctx, b, err := s.branchID(ctx, r.Branch)
	if err != nil {
		return nil, err
	}
	m, err := s.model(ctx, b)
	if err != nil {
		return nil, err
	}
	sc := &scope{branch: b, m: m}
	if r.Type != "" {
		if sc.typ, err = m.objType(r.Type); err != nil {
			return nil, err
		}
	}
	if r.Props < PropsType || r.Props > PropsNone {
		return nil, invalidf("props must be 0, 1 or 2, got %d", r.Props)
	}
	sc.view = view{m: m, props: r.Props, units: r.ResolveUnits, rendered: s.rendered}
	if strings.TrimSpace(r.Lang) == "" && strings.TrimSpace(r.Variants) == "" {
		// Neither named (most requests): the model's chains, worked out once.
		d := m.defaultView.Load()
		if d == nil {
			d = &defaultView{}
			if d.langs, err = m.langChain(""); err != nil {
				return nil, err
			}
			if d.variants, err = s.variantChain(ctx, m, ""); err != nil {
				return nil, err
			}
			for p := range d.keys {
				for u := range d.keys[p] {
					d.keys[p][u] = viewKey(&view{langs: d.langs, variants: d.variants, props: int32(p), units: u == 1})
				}
			}
			m.defaultView.Store(d)
		}
		sc.view.langs, sc.view.variants = d.langs, d.variants
		sc.view.key = d.keys[r.Props][b2i(r.ResolveUnits)]
		return sc, nil
	}
	if sc.view.langs, err = m.langChain(r.Lang); err != nil {
		return nil, err
	}
	if sc.view.variants, err = s.variantChain(ctx, m, r.Variants); err != nil {
		return nil, err
	}
	sc.view.key = viewKey(&sc.view)
	return sc, nil
}

// defaultView is what a view of a model takes when a request names no
// language and no variant: the chains (shared, only read) and the view
// keys by props mode and units.
type defaultView struct {
	langs, variants []int64
	keys            [PropsNone + 1][2]string
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// branchID resolves a branch id or ApiIdentifier to an indexed branch:
// branch objects live on branch 4. An ApiIdentifier no branch carries may
// be an alias (params.BranchAlias: "draft" is the default branch).
// The id is looked up once per index version (branchIDs).
//
// Every operation on a branch starts here, so it also returns the
// operation's context within OneVersion: the model and whatever else of
// the operation asks for the index version see the one the branch was
// resolved at, read once, also outside a request's OneRead (the binary
// proxy lookups of the file streams, the cache tags the change hub's
// eviction asks for).
func (s *Service) branchID(ctx context.Context, param string) (context.Context, int64, error) {
	ctx = OneVersion(ctx)
	v, err := s.Version(ctx)
	if err != nil {
		return ctx, 0, err
	}
	if id, ok := s.ids.get(v, param); ok {
		return ctx, id, nil
	}
	id, err := s.branches.ID(ctx, param)
	if err != nil {
		return ctx, 0, branchErr(err, param)
	}
	s.ids.put(v, param, id)
	return ctx, id, nil
}

// branchErr is err of a branch lookup (indexdoc.Branches) as this
// package's errors.
func branchErr(err error, param string) error {
	switch {
	case errors.Is(err, indexdoc.ErrBadBranch):
		return invalidf("branch: %v", strings.TrimPrefix(err.Error(), indexdoc.ErrBadBranch.Error()+": "))
	case errors.Is(err, indexdoc.ErrNoBranch):
		return unknownBranch(param)
	case err != nil:
		return fmt.Errorf("delivery: %w", err)
	}
	return nil
}

// baseQuery selects the visible objects of the scope: never users, never
// deleted ones unless asked.
func (sc *scope) baseQuery(deleted bool) search.And {
	q := search.And{search.Term{Field: indexdoc.FieldBranch, Value: sc.branch},
		search.Not{Query: search.Term{Field: indexdoc.FieldTypeRef, Value: content.TypeUser}}}
	if sc.typ != nil {
		q = append(q, search.Term{Field: indexdoc.FieldTypeRef, Value: sc.typ.id})
	}
	if !deleted {
		q = append(q, search.Not{Query: search.Term{Field: indexdoc.FieldDeleted, Value: true}})
	}
	return q
}

// List returns a page of the objects of a branch (of one type when
// r.Type is set), filtered and sorted, with resolved refs.
//
// A branch that does not exist has no objects: its list is empty (as the
// Index group answers, and as a caller who may not read a branch is
// answered, see UnknownBranch).
func (s *Service) List(ctx context.Context, r Request) (List, error) {
	skip, take, err := query.Page(r.Skip, r.Take)
	if err != nil {
		return List{}, invalidf("%v", err)
	}
	if skip+take > search.MaxResultWindow {
		return List{}, invalidf("skip+take must not exceed %d", search.MaxResultWindow)
	}
	sc, err := s.scope(ctx, r)
	if UnknownBranch(err) {
		return List{Skip: skip, Tags: unknownBranchTags(r.Branch)}, nil
	}
	if err != nil {
		return List{}, err
	}
	q, err := sc.listFilterQuery(r.Filter, r.Deleted)
	if err != nil {
		return List{}, err
	}
	plan, err := sc.sortPlan(r.Sort, s.langs)
	if err != nil {
		return List{}, err
	}
	if r.sortCap > 0 {
		plan.maxMatches = r.sortCap
	}
	res, hits, err := s.search(ctx, q, plan, skip, take)
	if err != nil {
		return List{}, err
	}
	out := List{Skip: skip, More: int64(skip+len(res.Hits)) < res.Total}
	srcs := make([]indexdoc.Source, 0, len(res.Hits))
	for _, h := range res.Hits {
		src, err := hits.source(h)
		if err != nil {
			return List{}, fmt.Errorf("delivery: %s: %w", h.ID, err)
		}
		srcs = append(srcs, src)
		out.Objs = append(out.Objs, sc.view.render(src))
	}
	out.Count = len(out.Objs)
	if out.Refs, _, err = s.resolve(ctx, sc, srcs, out.Objs, r); err != nil {
		return List{}, err
	}
	out.Tags = []string{ModelTag(sc.branch), ListTag(sc.branch)}
	if sc.typ != nil && !r.resolves() {
		out.Tags = []string{ModelTag(sc.branch), TypeListTag(sc.branch, sc.typ.id), AnyTypeListTag(sc.branch)}
	}
	return out, nil
}

// search returns the page [skip, skip+take) of the matches of q in the
// plan's order. A plan the engine cannot order (a sort by attribute)
// fetches every match, at most plan.maxMatches, and sorts in memory. The
// hits are read through the returned sourceHits.
func (s *Service) search(ctx context.Context, q search.Query, plan sortPlan, skip, take int) (search.SearchResult, *sourceHits, error) {
	if !plan.inMemory {
		req, hits := s.sourceSearch(search.SearchRequest{Index: s.objects, Query: q, Sort: plan.engineSort(), From: skip, Size: take})
		res, err := s.eng.Search(ctx, req)
		if err != nil {
			return res, nil, s.searchErr(err)
		}
		return res, hits, nil
	}
	n, err := s.eng.Count(ctx, s.objects, q)
	if err != nil {
		return search.SearchResult{}, nil, s.searchErr(err)
	}
	if n > int64(plan.maxMatches) {
		return search.SearchResult{}, nil, tooManyToSort(plan.maxMatches, n)
	}
	// Sorting needs every field of every match: no Held.
	res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: q, Size: int(min(n+1, int64(plan.maxMatches)))})
	if err != nil {
		return res, nil, s.searchErr(err)
	}
	if res.Total > int64(plan.maxMatches) { // grew since the count
		return search.SearchResult{}, nil, tooManyToSort(plan.maxMatches, res.Total)
	}
	plan.sortHits(res.Hits)
	res.Hits = res.Hits[min(skip, len(res.Hits)):min(skip+take, len(res.Hits))]
	return res, &sourceHits{cache: s.sources}, nil
}

func tooManyToSort(limit int, n int64) error {
	return invalidf("sort: sorting by an attribute orders at most %d objects and the filter matches %d: narrow the filter, or sort by $score, displayName or meta fields only", limit, n)
}

// Count counts the objects List would page through (none on a branch that
// does not exist).
func (s *Service) Count(ctx context.Context, r Request) (int64, error) {
	sc, err := s.scope(ctx, r)
	if UnknownBranch(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	q, err := sc.listFilterQuery(r.Filter, r.Deleted)
	if err != nil {
		return 0, err
	}
	n, err := s.eng.Count(ctx, s.objects, q)
	if err != nil {
		return 0, s.searchErr(err)
	}
	return n, nil
}

// Get returns one object by id or ApiIdentifier (of type r.Type when set).
func (s *Service) Get(ctx context.Context, r Request, id string) (Single, error) {
	sc, err := s.scope(ctx, r)
	if err != nil {
		return Single{}, err
	}
	src, err := s.find(ctx, sc, id, r.Deleted)
	if err != nil {
		return Single{}, err
	}
	out := Single{Obj: sc.view.render(src)}
	var asked []int64
	roots := []Object{out.Obj}
	if out.Refs, asked, err = s.resolve(ctx, sc, []indexdoc.Source{src}, roots, r); err != nil {
		return Single{}, err
	}
	out.Obj = roots[0]
	out.Tags = singleTags(sc.branch, id, src.ID, asked, r)
	return out, nil
}

func (s *Service) find(ctx context.Context, sc *scope, id string, deleted bool) (indexdoc.Source, error) {
	id = strings.TrimSpace(id)
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		// An object id names its document: read it as resolved references
		// are, and apply the scope's conditions (baseQuery) to it.
		srcs, err := s.multiGet(ctx, sc, []string{indexdoc.DocID(sc.branch, n)}, deleted)
		if err != nil {
			return indexdoc.Source{}, err
		}
		if len(srcs) == 0 || (sc.typ != nil && srcs[0].TypeRef != sc.typ.id) {
			return indexdoc.Source{}, notFoundf("object %q on branch %d", id, sc.branch)
		}
		return srcs[0], nil
	}
	q := search.Term{Field: indexdoc.FieldAPIIdentifier, Value: id}
	req, hits := s.sourceSearch(search.SearchRequest{Index: s.objects, Query: append(sc.baseQuery(deleted), q), Size: 2})
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return indexdoc.Source{}, s.searchErr(err)
	}
	switch len(res.Hits) {
	case 0:
		return indexdoc.Source{}, notFoundf("object %q on branch %d", id, sc.branch)
	case 1:
		return hits.source(res.Hits[0])
	}
	return indexdoc.Source{}, fmt.Errorf("%w: %q", ErrAmbiguous, id)
}

// searchErr turns a missing index into "nothing there" and an invalid
// query (a filter value the engine refuses) into a client error.
func (s *Service) searchErr(err error) error {
	switch {
	case errors.Is(err, search.ErrIndexNotFound):
		return notFoundf("the index does not exist yet")
	case errors.Is(err, search.ErrInvalidQuery):
		return fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	return fmt.Errorf("delivery: search: %w", err)
}
