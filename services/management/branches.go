package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/content"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetBranches implements Cms_GetBranches.
func (s *service) GetBranches(ctx context.Context, req *managementv1.GetBranchesRequest) (*managementv1.CmsObjectList, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.GetBranches(ctx, req)
	}
	page, err := s.content.GetBranches(ctx, content.ListQuery{
		ReadOptions: readOptions(true, req.GetAttributes(), req.GetLanguages(), req.GetVariants()),
		Take:        int(req.GetTake()),
		Continue:    req.GetContinue(),
	})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObjectList(page.Objects, page.Continue)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out)
}

// CreateBranch implements Cms_CreateBranch (200 with the new branch object).
func (s *service) CreateBranch(ctx context.Context, req *managementv1.CreateBranchRequest) (*managementv1.CmsObject, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.CreateBranch(ctx, req)
	}
	vals, err := valueInputs(req.GetValues())
	if err != nil {
		return nil, s.toStatus(ctx, err)
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
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.GetBranch(ctx, req)
	}
	b, err := s.content.GetBranch(ctx, req.GetId(), readOptions(true, req.GetAttributes(), req.GetLanguages(), req.GetVariants()))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(b)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out)
}

// UpdateBranch implements Cms_UpdateBranch.
func (s *service) UpdateBranch(ctx context.Context, req *managementv1.UpdateBranchRequest) (*managementv1.UpdateBranchResponse, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.UpdateBranch(ctx, req)
	}
	vals, err := valueInputs(req.GetValues())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	n, t, err := s.content.UpdateBranch(ctx, req.GetId(), change(ctx, req.GetComment()), vals)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.UpdateBranchResponse{CreatedValues: int32(n), Transaction: toTransaction(t)}, nil
}

// DeleteBranch implements Cms_DeleteBranch (permanent).
func (s *service) DeleteBranch(ctx context.Context, req *managementv1.DeleteBranchRequest) (*managementv1.DeleteBranchResponse, error) {
	if s.content == nil {
		return s.UnimplementedManagementServiceServer.DeleteBranch(ctx, req)
	}
	t, err := s.content.DeleteBranch(ctx, req.GetId(), change(ctx, req.GetComment()))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.DeleteBranchResponse{Transaction: toTransaction(t)}, nil
}
