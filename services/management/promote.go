package management

import (
	"context"
	"fmt"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/params"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// GetBranchDiff implements Cms_GetBranchDiff (ours, not NovaDB's): what
// the branch holds of its own against its parent, paged by object id.
func (s *service) GetBranchDiff(ctx context.Context, req *managementv1.GetBranchDiffRequest) (*managementv1.BranchDiff, error) {
	take, err := params.Take("take", req.Take, content.DefaultDiffTake, content.MaxDiffTake)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	page, err := s.content.BranchDiff(ctx, req.GetBranch(), content.DiffQuery{Caller: callerRef(ctx), Take: take, Continue: req.GetContinue()})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.BranchDiff{Branch: int32(page.Branch), Parent: int32(page.Parent), Count: int32(len(page.Objects))}
	if page.Continue != "" {
		out.Continue = &page.Continue
	}
	if out.Objects, err = toObjectDiffs(page.Objects); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return out, nil
}

// PromoteBranch implements Cms_PromoteBranch (ours): the branch's own
// changes applied to its parent in one transaction.
func (s *service) PromoteBranch(ctx context.Context, req *managementv1.PromoteBranchRequest) (*managementv1.PromoteBranchResponse, error) {
	res, err := s.content.PromoteBranch(ctx, req.GetBranch(), change(ctx, req.GetComment()), content.PromoteInput{
		Objects: req.GetObjectIds(), Conflicts: req.GetConflicts(), DryRun: req.GetDryRun()})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.PromoteBranchResponse{DryRun: res.DryRun, Parent: int32(res.Parent),
		PromotedObjects: int32(res.Objects), Created: int32(res.Created), Deleted: int32(res.Deleted),
		Updated: int32(res.Updated), ConflictCount: int32(res.ConflictCount)}
	if res.Transaction != nil {
		out.Transaction = toTransaction(*res.Transaction)
	}
	if out.Conflicts, err = toObjectDiffs(res.Conflicts); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return out, nil
}

func toObjectDiffs(ds []content.ObjectDiff) ([]*managementv1.ObjectDiff, error) {
	out := make([]*managementv1.ObjectDiff, len(ds))
	for i, d := range ds {
		po := &managementv1.ObjectDiff{Object: int32(d.Object), TypeRef: int32(d.Type), Guid: d.GUID, Kind: d.Kind,
			Transaction: d.Transaction, Conflict: d.Conflict, Changes: make([]*managementv1.ValueDiff, len(d.Changes))}
		if d.APIIdentifier != "" {
			po.ApiIdentifier = &d.APIIdentifier
		}
		for j, c := range d.Changes {
			pc := &managementv1.ValueDiff{Attribute: int32(c.Attribute), Language: int32(c.Language), Variant: int32(c.Variant),
				Transaction: c.Transaction, Conflict: c.Conflict}
			var err error
			if pc.Values, err = toValues(c.Child); err != nil {
				return nil, err
			}
			if pc.BaseValues, err = toValues(c.Base); err != nil {
				return nil, err
			}
			if pc.ParentValues, err = toValues(c.Parent); err != nil {
				return nil, err
			}
			po.Changes[j] = pc
		}
		out[i] = po
	}
	return out, nil
}

// RevertTransaction implements Cms_RevertTransaction (ours): what one
// transaction wrote on the branch undone in one transaction.
func (s *service) RevertTransaction(ctx context.Context, req *managementv1.RevertTransactionRequest) (*managementv1.RevertObjectsResponse, error) {
	res, err := s.content.RevertTransaction(ctx, req.GetBranch(), change(ctx, req.GetComment()), req.GetTransaction())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &managementv1.RevertObjectsResponse{RevertedObjects: int32(res.RevertedObjects),
		Transaction: toTransaction(res.Transaction)}, nil
}

// ScheduleRelease implements Cms_ScheduleRelease (ours): a
// jobPromoteRelease job that promotes the branch at the time given.
func (s *service) ScheduleRelease(ctx context.Context, req *managementv1.ScheduleReleaseRequest) (*managementv1.CmsJob, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.ScheduleRelease(ctx, req)
	}
	r := jobs.ScheduleRequest{Branch: req.GetBranch(), Objects: req.GetObjectIds(), Conflicts: req.GetConflicts(),
		Comment: req.GetComment(), Caller: callerRef(ctx)}
	if req.At != nil {
		if err := req.At.CheckValid(); err != nil {
			return nil, s.toStatus(ctx, fmt.Errorf("%w: at: %v", jobs.ErrInvalid, err))
		}
		r.At = req.At.AsTime()
	}
	j, err := s.jobs.ScheduleRelease(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return jobToProto(j), nil
}
