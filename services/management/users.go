package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/auth"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// GetUserDisplayName implements Identity_GetUserDisplayName: the user
// object with its display name values (attribute 1000). Any authenticated
// caller may look names up (clients show authors of transactions).
func (s *service) GetUserDisplayName(ctx context.Context, req *managementv1.GetUserDisplayNameRequest) (*managementv1.CmsObject, error) {
	u, err := s.content.UserDisplayName(ctx, req.GetName())
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out, err := toObject(u)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return conditional(ctx, out, u.Version)
}

// Permissions are declared per RPC in the proto (cms.options.v1.access)
// and enforced by the authorization interceptor before a handler runs
// (services/internal/interceptors/authz.go): object operations need read or
// write on the branch addressed (a grant covers the descendants); reading a
// branch object needs read on it, changing it write on it, creating one
// write on its parent, deleting one write on its parent. Administrators may
// do everything; to others an unknown branch is 403 like one without the
// grant, and a list is empty for both (declared list). What the interceptor cannot
// see from the request alone (the branch of a job or comment addressed by
// id) the resolver looks up (OwnerBranch); lists (declared list) are
// filtered by the domain queries with the caller.

// BranchChain implements interceptors.BranchResolver from the store.
func (s *service) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	chain, err := s.content.BranchChain(ctx, branch)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return chain, nil
}

// OwnerBranch implements interceptors.OwnerBranchResolver: the branch of
// the job, comment or webhook definition id (deleted ones included;
// unknown ids are 404).
func (s *service) OwnerBranch(ctx context.Context, owner optionsv1.Owner, id int64) (int64, error) {
	switch {
	case owner == optionsv1.Owner_OWNER_JOB && s.jobs != nil:
		j, err := s.jobs.Get(ctx, id)
		if err != nil {
			return 0, s.toStatus(ctx, err)
		}
		return j.Branch, nil
	case owner == optionsv1.Owner_OWNER_COMMENT:
		c, err := s.content.GetComment(ctx, id)
		if err != nil {
			return 0, s.toStatus(ctx, err)
		}
		return c.Branch, nil
	case owner == optionsv1.Owner_OWNER_WEBHOOK && s.webhooks != nil:
		b, err := s.webhooks.Branch(ctx, id)
		if err != nil {
			return 0, s.toStatus(ctx, err)
		}
		return b, nil
	}
	return 0, status.Errorf(codes.Unimplemented, "%v: not available in this deployment", owner)
}

// InstallationJob implements interceptors.InstallationJobResolver: whether
// the job a CreateJob request starts, or the job an UpdateJob or DeleteJob
// request addresses, acts on the whole installation. A definition or job
// that does not resolve answers as the handler would (404, 400).
func (s *service) InstallationJob(ctx context.Context, req proto.Message) (bool, error) {
	if s.jobs == nil {
		return false, nil
	}
	var branch, definition int64
	switch r := req.(type) {
	case *managementv1.CreateJobRequest:
		branch, definition = int64(r.GetBranchId()), int64(r.GetJobDefinitionId())
	case interface{ GetJobId() int32 }:
		j, err := s.jobs.Get(ctx, int64(r.GetJobId()))
		if err != nil {
			return false, s.toStatus(ctx, err)
		}
		branch, definition = j.Branch, j.Definition
	default:
		return false, status.Errorf(codes.Internal, "installation_job_admin on %T", req)
	}
	d, err := s.jobs.Definition(ctx, branch, definition)
	if err != nil {
		return false, s.toStatus(ctx, err)
	}
	return d.InstallationWide(), nil
}

// NewBranchParent implements interceptors.NewBranchParentResolver: the
// parent (attribute 4000) of the branch a CreateBranch request creates.
func (s *service) NewBranchParent(req proto.Message) string {
	r, _ := req.(*managementv1.CreateBranchRequest)
	vals, _ := valueInputs(r.GetValues())
	return parentOf(vals)
}

// caller is the authenticated principal; the interceptors guarantee one,
// a missing one reads as a user without grants (fail closed).
func caller(ctx context.Context) auth.Principal {
	p, _ := auth.FromContext(ctx)
	return p
}

// callerRef is caller as the domain's write APIs take it (content.Change,
// content.Actor, jobs.CreateRequest): built once here from the context.
func callerRef(ctx context.Context) *auth.Principal {
	p := caller(ctx)
	return &p
}
