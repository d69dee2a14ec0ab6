package index

import (
	"context"
	"time"

	"github.com/cmsplatform/cms/pkg/indexquery"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func (s *service) CommentSearch(ctx context.Context, req *indexv1.CommentSearchRequest) (*indexv1.CommentSearchResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	r := indexquery.CommentSearchRequest{Branch: branch, Filter: commentFilter(req.GetFilter()),
		Page: page(req.GetPage()), CommentFreshness: commentFreshness(req.GetMinChangeTrackingTimestamp(), req.MaxWaitTime)}
	if so := req.GetSort(); so != nil {
		r.Sort = &indexquery.CommentSort{Field: int(so.GetField()), Reverse: so.GetReverse()}
	}
	res, err := s.q.CommentSearch(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &indexv1.CommentSearchResult{ChangeTrackingTimestamp: ts(res.Timestamp), More: res.More,
		Comments: make([]*indexv1.CommentItem, 0, len(res.Items))}
	for _, it := range res.Items {
		c := &indexv1.CommentItem{Id: it.ID, Created: timestamppb.New(it.Created), Modified: timestamppb.New(it.Modified),
			ObjectRef: int32(it.ObjectRef), ObjectType: int32(it.ObjectType), Summary: &it.Summary,
			MentionedUsers: it.MentionedUsers}
		if it.User != "" {
			c.User = &it.User
		}
		if c.MentionedUsers == nil {
			c.MentionedUsers = []string{}
		}
		out.Comments = append(out.Comments, c)
	}
	return out, nil
}

func (s *service) CommentCount(ctx context.Context, req *indexv1.CommentCountRequest) (*indexv1.CommentCountResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.CommentCount(ctx, indexquery.CommentCountRequest{Branch: branch,
		Filter: commentFilter(req.GetFilter()), CommentFreshness: commentFreshness(req.GetMinChangeTrackingTimestamp(), req.MaxWaitTime)})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.CommentCountResult{ChangeTrackingTimestamp: ts(res.Timestamp), Count: int32(res.Count)}, nil
}

func (s *service) CommentOccurrences(ctx context.Context, req *indexv1.CommentOccurrencesRequest) (*indexv1.CommentOccurrencesResult, error) {
	branch, err := s.branchID(ctx, req.GetBranch())
	if err != nil {
		return nil, err
	}
	res, err := s.q.CommentOccurrences(ctx, indexquery.CommentOccurrencesRequest{Branch: branch,
		Filter: commentFilter(req.GetFilter()), Page: page(req.GetPage()),
		CommentFreshness: commentFreshness(req.GetMinChangeTrackingTimestamp(), req.MaxWaitTime),
		User:             req.GetGetUserOccurrences(), MentionedUsers: req.GetGetMentionedUsersOccurrences(),
		ObjectType: req.GetGetObjectTypeOccurrences()})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &indexv1.CommentOccurrencesResult{ChangeTrackingTimestamp: ts(res.Timestamp), UserOccurrences: occurrences(res.User),
		MentionedUsersOccurrences: occurrences(res.MentionedUsers), ObjectTypeOccurrences: occurrences(res.ObjectType)}, nil
}

func commentFilter(f *indexv1.CommentFilterCondition) indexquery.CommentFilter {
	if f == nil {
		return indexquery.CommentFilter{}
	}
	return indexquery.CommentFilter{SearchPhrase: f.SearchPhrase, User: f.User, Mentioned: f.Mentioned,
		ObjectTypes: ids64(f.GetObjectTypes())}
}

func commentFreshness(minTime *timestamppb.Timestamp, wait *string) indexquery.CommentFreshness {
	var f indexquery.CommentFreshness
	if minTime != nil {
		t := minTime.AsTime()
		f.MinTimestamp = &t
	}
	if wait != nil {
		f.MaxWait = *wait
	}
	return f
}

func ts(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}
