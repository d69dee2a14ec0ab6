package index

import (
	"context"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/indexquery"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
)

func (s *service) ObjectSearch(ctx context.Context, req *indexv1.ObjectSearchRequest) (*indexv1.ObjectSearchResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.Search(ctx, indexquery.SearchRequest{Branch: branch, Filter: filterFor(ctx, req.GetFilter()),
		Sort: sorts(req.GetSortBy()), Page: page(req.GetPage()), Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime)})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &indexv1.ObjectSearchResult{ChangeTrackingVersion: &res.Version, More: res.More, Objects: make([]*indexv1.ObjectItem, 0, len(res.Items))}
	for _, it := range res.Items {
		out.Objects = append(out.Objects, item(it))
	}
	return out, nil
}

func (s *service) ObjectCount(ctx context.Context, req *indexv1.ObjectCountRequest) (*indexv1.ObjectCountResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.Count(ctx, indexquery.CountRequest{Branch: branch, Filter: filterFor(ctx, req.GetFilter()),
		Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime)})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.ObjectCountResult{ChangeTrackingVersion: &res.Version, Count: int32(res.Count)}, nil
}

func (s *service) ObjectXmlLinkCount(ctx context.Context, req *indexv1.ObjectXmlLinkCountRequest) (*indexv1.ObjectCountResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.XMLLinkCount(ctx, indexquery.XMLLinkCountRequest{Branch: branch, ObjectIDs: ids64(req.GetObjectIds()),
		Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime)})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.ObjectCountResult{ChangeTrackingVersion: &res.Version, Count: int32(res.Count)}, nil
}

func (s *service) ObjectOccurrences(ctx context.Context, req *indexv1.ObjectOccurrencesRequest) (*indexv1.ObjectOccurrencesResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.Occurrences(ctx, indexquery.OccurrencesRequest{Branch: branch, Filter: filterFor(ctx, req.GetFilter()),
		Page: page(req.GetPage()), Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime),
		ModifiedBy: req.GetGetModifiedByOccurrences(), Type: req.GetGetTypeOccurrences(), Deleted: req.GetGetDeletedOccurrences()})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.ObjectOccurrencesResult{ChangeTrackingVersion: &res.Version, ModifiedByOccurrences: occurrences(res.ModifiedBy),
		TypeOccurrences: occurrences(res.Type), DeletedOccurrences: occurrences(res.Deleted)}, nil
}

func (s *service) WorkItemOccurrences(ctx context.Context, req *indexv1.WorkItemOccurrencesRequest) (*indexv1.WorkItemOccurrencesResult, error) {
	// Only the branches the caller may read are counted (declared list).
	p, _ := auth.FromContext(ctx)
	r := indexquery.WorkItemRequest{Page: page(req.GetPage()), Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime), Caller: &p}
	res, err := s.q.WorkItemOccurrences(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.WorkItemOccurrencesResult{ChangeTrackingVersion: &res.Version, BranchOccurrences: occurrences(&res.Branches)}, nil
}

func (s *service) Suggestions(ctx context.Context, req *indexv1.SuggestionsRequest) (*indexv1.SuggestionsResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	r := indexquery.SuggestionsRequest{Branch: branch, Pattern: req.Pattern, DisplayName: req.GetSuggestDisplayName(),
		FullText: req.GetSuggestFullText(), Filter: filterFor(ctx, req.GetFilter()), SortByValue: req.GetSortByValue(), Analyze: req.Analyze,
		Fuzzy: req.GetFuzzy(), FuzzyPrefixLength: int(req.GetFuzzyPrefixLength()),
		Freshness: freshness(req.MinChangeTrackingVersion, req.MaxWaitTime)}
	for _, k := range req.GetSuggestAttributes() {
		r.Attributes = append(r.Attributes, indexquery.AttrKey{Attr: int64(k.GetAttrId()), Lang: int64(k.GetLangId()), Variant: int64(k.GetVariantId())})
	}
	if req.Take != nil {
		t := int(*req.Take)
		r.Take = &t
	}
	if req.FuzzyMinSimilarity != nil {
		// Through float32 → decimal text → float64, so 0.7 stays 0.7.
		f := float32ToDecimal(*req.FuzzyMinSimilarity)
		r.FuzzyMinSimilarity = &f
	}
	res, err := s.q.Suggestions(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &indexv1.SuggestionsResult{ChangeTrackingVersion: &res.Version, Suggestions: make([]*indexv1.Suggestion, 0, len(res.Suggestions))}
	for _, sg := range res.Suggestions {
		out.Suggestions = append(out.Suggestions, &indexv1.Suggestion{Value: sg.Value, Count: int32(sg.Count), Length: int32(sg.Length)})
	}
	return out, nil
}

func (s *service) MatchStrings(ctx context.Context, req *indexv1.MatchStringsRequest) (*indexv1.MatchStringsResponse, error) {
	idx, err := indexquery.MatchStrings(ctx, req.Query, req.GetUseOrOperator(), req.GetStrings())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &indexv1.MatchStringsResponse{Indexes: make([]int32, len(idx))}
	for i, v := range idx {
		out.Indexes[i] = int32(v)
	}
	return out, nil
}
