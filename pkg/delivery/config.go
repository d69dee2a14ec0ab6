package delivery

import (
	"context"
	"slices"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// configView renders meta-model objects: default language, all props.
func configView(m *branchModel) view {
	langs, _ := m.langChain("")
	return view{m: m, langs: langs, variants: []int64{0}, props: PropsAll}
}

// Languages returns the languages of a branch (type 20 objects), by id.
func (s *Service) Languages(ctx context.Context, branch string) ([]Object, error) {
	return s.modelObjects(ctx, branch, func(m *branchModel) []int64 { return m.langList })
}

// Types returns the object types of a branch, by id.
func (s *Service) Types(ctx context.Context, branch string) ([]Object, error) {
	return s.modelObjects(ctx, branch, func(m *branchModel) []int64 { return m.typeList })
}

// modelObjects renders the objects of the branch's model that ids lists.
func (s *Service) modelObjects(ctx context.Context, branch string, ids func(*branchModel) []int64) ([]Object, error) {
	ctx, b, err := s.branchID(ctx, branch)
	if UnknownBranch(err) {
		return []Object{}, nil // a branch that does not exist has none
	}
	if err != nil {
		return nil, err
	}
	m, err := s.model(ctx, b)
	if err != nil {
		return nil, err
	}
	v := configView(m)
	list := ids(m)
	out := make([]Object, 0, len(list))
	for _, id := range list {
		out = append(out, v.render(m.sources[id]))
	}
	return out, nil
}

// Branches returns the indexed branches the caller who may read: the type
// 40 objects of branch 4 whose chain (pkg/auth.Principal.CanRead) grants
// who read access.
func (s *Service) Branches(ctx context.Context, who auth.Principal) ([]Object, error) {
	m, err := s.model(ctx, content.BranchDefault)
	if err != nil {
		return nil, err
	}
	v := configView(m)
	var out []Object
	parents := map[int64]int64{}
	err = s.branches.Scan(ctx, func(src indexdoc.Source) {
		parents[src.ID] = indexdoc.BranchParent(src)
		out = append(out, v.render(src))
	})
	if err != nil || who.Admin {
		return out, err
	}
	can := who.CanRead(indexdoc.Chains(parents))
	return slices.DeleteFunc(out, func(o Object) bool { return !can(o.Meta.ID) }), nil
}

// AllBranchChains returns the chain (the branch, then its ancestors) of
// every live indexed branch, for filters that span branches.
func (s *Service) AllBranchChains(ctx context.Context) (map[int64][]int64, error) {
	return s.branches.AllChains(ctx)
}

// UpdateInfo says when the published view of a branch last changed.
type UpdateInfo struct {
	// LastTransaction is the newest lastTransaction of the branch's
	// objects; LastModified its time (zero when unknown).
	LastTransaction int64
	LastModified    time.Time
}

// UpdateInfo returns the newest change indexed for branch.
func (s *Service) UpdateInfo(ctx context.Context, branch string) (UpdateInfo, error) {
	_, b, err := s.branchID(ctx, branch)
	if err != nil {
		return UpdateInfo{}, err
	}
	res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Size: 1,
		Query: search.Term{Field: indexdoc.FieldBranch, Value: b},
		Sort:  []search.SortField{{Field: indexdoc.FieldLastTransaction, Desc: true}}})
	if err != nil {
		return UpdateInfo{}, s.searchErr(err)
	}
	if len(res.Hits) == 0 {
		return UpdateInfo{}, nil
	}
	src, err := indexdoc.DecodeSource(res.Hits[0].Fields)
	if err != nil {
		return UpdateInfo{}, err
	}
	return UpdateInfo{LastTransaction: src.LastTransaction, LastModified: src.Modified}, nil
}
