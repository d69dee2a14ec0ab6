package management

import (
	"context"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetBranches implements Cms_GetBranches.
func (s *service) GetBranches(ctx context.Context, req *managementv1.GetBranchesRequest) (*managementv1.CmsObjectList, error) {
	take, err := sentTake(req.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	page, err := s.content.GetBranches(ctx, content.ListQuery{
		ReadOptions: readOptions(ctx, true, req.GetAttributes(), req.GetLanguages(), req.GetVariants()),
		Take:        take,
		Continue:    req.GetContinue(),
	})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObjectList(page.Objects, page.Continue)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out, objectVersions(page.Objects...)...)
}

// CreateBranch implements Cms_CreateBranch (200 with the new branch object).
func (s *service) CreateBranch(ctx context.Context, req *managementv1.CreateBranchRequest) (*managementv1.CmsObject, error) {
	vals, err := valueInputs(req.GetValues())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if err := refuseIfMatch(ctx); err != nil {
		return nil, err
	}
	b, _, err := s.content.CreateBranch(ctx, change(ctx, req.GetComment()), vals)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(b)
	return out, s.toStatus(ctx, err)
}

// GetBranch implements Cms_GetBranch.
func (s *service) GetBranch(ctx context.Context, req *managementv1.GetBranchRequest) (*managementv1.CmsObject, error) {
	b, err := s.content.GetBranch(ctx, req.GetId(), readOptions(ctx, true, req.GetAttributes(), req.GetLanguages(), req.GetVariants()))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(b)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out, b.Version)
}

// UpdateBranch implements Cms_UpdateBranch.
func (s *service) UpdateBranch(ctx context.Context, req *managementv1.UpdateBranchRequest) (*managementv1.UpdateBranchResponse, error) {
	vals, err := valueInputs(req.GetValues())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	n, t, err := s.content.UpdateBranch(ctx, req.GetId(), conditionalWrite(ctx, req.GetComment()), vals)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.UpdateBranchResponse{CreatedValues: int32(n), Transaction: toTransaction(t)}, nil
}

// DeleteBranch implements Cms_DeleteBranch (permanent).
func (s *service) DeleteBranch(ctx context.Context, req *managementv1.DeleteBranchRequest) (*managementv1.DeleteBranchResponse, error) {
	t, err := s.content.DeleteBranch(ctx, req.GetId(), conditionalWrite(ctx, req.GetComment()))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.DeleteBranchResponse{Transaction: toTransaction(t)}, nil
}

// parentOf returns the parent branch (attribute 4000) of a new branch as an
// identifier: the default branch when none is given. A malformed value is
// left to the domain to reject; the permission is then checked on the
// default branch.
func parentOf(vals []content.ValueInput) string {
	for _, v := range vals {
		if v.Attribute == content.AttrBranchParent {
			if id, err := strconv.ParseInt(strings.TrimSpace(string(v.JSON)), 10, 64); err == nil && id > 0 {
				return strconv.FormatInt(id, 10)
			}
		}
	}
	return strconv.FormatInt(content.BranchDefault, 10)
}
