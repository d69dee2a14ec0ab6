package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Comment permissions (inferred: NovaDB declares 403 on every comment
// operation without saying when). A comment lives on a branch, and the
// branch's read permission governs it, like the objects it is attached to:
//
//   - reading a comment needs read on the comment's branch; a list keeps
//     the comments of the readable branches only (declared list: the
//     domain query filters), so a branchRef the caller may not read, or
//     naming no branch, finds none;
//   - creating a comment needs read on the branch: commenting is how
//     reviewers with read-only access give feedback, and it changes no
//     content (write is not required);
//   - updating or deleting needs read on the comment's branch and being its
//     author (pkg/content); an administrator may do all of it.
//
// An unknown branch or comment stays 404.

// commentActor is the caller as the comment domain sees it: the user writes are
// recorded under (X-CmsApi-Username for internal callers) and whether the
// authenticated principal is an administrator.
func commentActor(ctx context.Context) content.Actor {
	if _, ok := auth.FromContext(ctx); !ok {
		return content.Actor{}
	}
	return content.Actor{Caller: callerRef(ctx)}
}

// CreateComment implements Comment_CreateComment (200 with the comment).
func (s *service) CreateComment(ctx context.Context, req *managementv1.CreateCommentRequest) (*managementv1.CmsComment, error) {
	if err := refuseIfMatch(ctx); err != nil {
		return nil, err
	}
	c, err := s.content.CreateComment(ctx, commentActor(ctx), int64(req.GetBranchId()), int64(req.GetObjectRef()), req.GetBody())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return commentToProto(c), nil
}

// GetComments implements Comment_GetComments: id descending, continuation
// token in "continue", null on the last page.
func (s *service) GetComments(ctx context.Context, req *managementv1.GetCommentsRequest) (*managementv1.CmsCommentList, error) {
	take, err := sentTake(req.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	q := content.CommentQuery{
		User: req.GetUser(), Deleted: req.IsDeleted, Take: take, Continue: req.GetContinue(),
	}
	if req.BranchRef != nil {
		b := int64(req.GetBranchRef())
		q.Branch = &b
	}
	p := caller(ctx)
	q.Caller = &p
	if req.ObjectRef != nil {
		o := int64(req.GetObjectRef())
		q.ObjectID = &o
	}
	page, err := s.content.GetComments(ctx, q)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.CmsCommentList{
		Count:       int32(len(page.Comments)),
		CmsComments: make([]*managementv1.CmsComment, 0, len(page.Comments)),
	}
	if page.Continue != "" {
		out.Continue = &page.Continue
	}
	for _, c := range page.Comments {
		out.CmsComments = append(out.CmsComments, commentToProto(c))
	}
	return conditional(ctx, out)
}

// GetComment implements Comment_GetComment (deleted comments included).
func (s *service) GetComment(ctx context.Context, req *managementv1.GetCommentRequest) (*managementv1.CmsComment, error) {
	c, err := s.comment(ctx, req.GetCommentId())
	if err != nil {
		return nil, err
	}
	return conditional(ctx, commentToProto(c))
}

// UpdateComment implements Comment_UpdateComment (200, empty body; 404 for
// a deleted comment).
func (s *service) UpdateComment(ctx context.Context, req *managementv1.UpdateCommentRequest) (*emptypb.Empty, error) {
	if _, err := s.comment(ctx, req.GetCommentId()); err != nil {
		return nil, err
	}
	if err := s.content.UpdateComment(ctx, conditionalActor(ctx), req.GetCommentId(), req.GetBody()); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

// DeleteComment implements Comment_DeleteComment (200, empty body; soft).
func (s *service) DeleteComment(ctx context.Context, req *managementv1.DeleteCommentRequest) (*emptypb.Empty, error) {
	if _, err := s.comment(ctx, req.GetCommentId()); err != nil {
		return nil, err
	}
	if err := s.content.DeleteComment(ctx, conditionalActor(ctx), req.GetCommentId()); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

// comment reads comment id; the interceptor has checked the caller's read
// grant on its branch (the RPC's access names the comment as owner; a
// comment's branch never changes, so checking before a write is safe).
func (s *service) comment(ctx context.Context, id int64) (content.Comment, error) {
	c, err := s.content.GetComment(ctx, id)
	if err != nil {
		return content.Comment{}, s.toStatus(ctx, err)
	}
	return c, nil
}

func commentToProto(c content.Comment) *managementv1.CmsComment {
	out := &managementv1.CmsComment{
		Id: c.ID, ObjectRef: int32(c.ObjectID), BranchRef: int32(c.Branch),
		Created: timestamppb.New(c.Created), Modified: timestamppb.New(c.Modified), Deleted: c.Deleted,
		Body: &c.Body,
	}
	if c.User != "" {
		out.User = &c.User
	}
	return out
}
