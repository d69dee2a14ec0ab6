package management

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/jobs"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Job permissions. Creating a job is declared in the proto (write on
// branch_id); a list (declared list) keeps the jobs of the branches the
// caller may read, filtered in the domain query, so a branchId the caller
// may not read finds none. A job addressed by id
// is governed by its branch like a comment: reading it (and its logs,
// progress, metrics, artifacts) needs read on the job's branch, changing
// or deleting it write on that branch; an administrator may do all of it.

// CreateJob implements Job_CreateJob (200 with the job, state 0 New).
func (s *service) CreateJob(ctx context.Context, req *managementv1.CreateJobRequest) (*managementv1.CmsJob, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.CreateJob(ctx, req)
	}
	r := jobs.CreateRequest{Branch: int64(req.GetBranchId()), Definition: int64(req.GetJobDefinitionId()),
		Scope: int64s(req.GetScopeIds()), Objects: int64s(req.GetObjIds()), Language: int64(req.GetLanguage()),
		Caller: callerRef(ctx)}
	for _, p := range req.GetParameters() {
		r.Parameters = append(r.Parameters, jobs.Parameter{Name: p.GetName(), Values: p.GetValues()})
	}
	if in := req.GetInputFile(); in != nil && (in.Token != nil || in.Name != nil) {
		r.Input = &jobs.InputFile{Token: in.GetToken(), Name: in.GetName()}
	}
	j, err := s.jobs.Create(ctx, r)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return jobToProto(j), nil
}

// GetJobs implements Job_GetJobs: newest first, "continue" null on the
// last page.
func (s *service) GetJobs(ctx context.Context, req *managementv1.GetJobsRequest) (*managementv1.CmsJobList, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJobs(ctx, req)
	}
	take, err := sentTake(req.Take)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	q := jobs.Query{Branch: opt64(req.BranchId), Definition: opt64(req.DefinitionRef), Trigger: opt64(req.TriggerRef),
		User: req.GetCreatedBy(), Deleted: req.IsDeleted, Take: take, Continue: req.GetContinue()}
	if req.State != nil {
		st := int(req.GetState())
		q.State = &st
	}
	p := caller(ctx)
	q.Caller = &p
	page, err := s.jobs.List(ctx, q)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	out := &managementv1.CmsJobList{Count: int32(len(page.Jobs)), CmsJobs: make([]*managementv1.CmsJob, 0, len(page.Jobs))}
	if page.Continue != "" {
		out.Continue = &page.Continue
	}
	for _, j := range page.Jobs {
		out.CmsJobs = append(out.CmsJobs, jobToProto(j))
	}
	return out, nil
}

// GetJob implements Job_GetJob (deleted jobs included).
func (s *service) GetJob(ctx context.Context, req *managementv1.GetJobRequest) (*managementv1.CmsJob, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJob(ctx, req)
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return jobToProto(j), nil
}

// UpdateJob implements Job_UpdateJob (200, empty body): kill (0, or 4),
// restart (1, or 5) and retainUntil; a transition the job's state does
// not allow is 400 naming it.
func (s *service) UpdateJob(ctx context.Context, req *managementv1.UpdateJobRequest) (*emptypb.Empty, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.UpdateJob(ctx, req)
	}
	if _, err := s.job(ctx, req.GetJobId()); err != nil {
		return nil, err
	}
	var state *int
	if req.State != nil {
		st := int(req.GetState())
		state = &st
	}
	var retain *time.Time
	if req.RetainUntil != nil {
		if err := req.RetainUntil.CheckValid(); err != nil {
			return nil, s.toStatus(ctx, fmt.Errorf("%w: retainUntil: %v", jobs.ErrInvalid, err))
		}
		t := req.RetainUntil.AsTime()
		retain = &t
	}
	if err := s.jobs.Update(ctx, int64(req.GetJobId()), caller(ctx).User(), state, retain); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

// DeleteJob implements Job_DeleteJob (200, empty body; the job is marked
// deleted, and killed when it has not finished).
func (s *service) DeleteJob(ctx context.Context, req *managementv1.DeleteJobRequest) (*emptypb.Empty, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.DeleteJob(ctx, req)
	}
	if _, err := s.job(ctx, req.GetJobId()); err != nil {
		return nil, err
	}
	if err := s.jobs.Delete(ctx, int64(req.GetJobId()), caller(ctx).User()); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return &emptypb.Empty{}, nil
}

// GetJobMetrics implements Job_GetJobMetrics: the newest maxItems samples
// (all kept ones when absent), oldest first.
func (s *service) GetJobMetrics(ctx context.Context, req *managementv1.GetJobMetricsRequest) (*managementv1.JobMetricsList, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJobMetrics(ctx, req)
	}
	if req.MaxItems != nil && req.GetMaxItems() < 0 {
		return nil, s.toStatus(ctx, fmt.Errorf("%w: maxItems %d is negative", jobs.ErrInvalid, req.GetMaxItems()))
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	ms := j.Metrics
	if req.MaxItems != nil && int(req.GetMaxItems()) < len(ms) {
		ms = ms[len(ms)-int(req.GetMaxItems()):]
	}
	out := &managementv1.JobMetricsList{Items: make([]*managementv1.JobMetrics, 0, len(ms))}
	for _, m := range ms {
		out.Items = append(out.Items, &managementv1.JobMetrics{UpTime: m.UpTime, Memory: m.Memory, Cpu: m.CPU})
	}
	return out, nil
}

// GetJobProgress implements Job_GetJobProgress (progress null until the
// job reports one).
func (s *service) GetJobProgress(ctx context.Context, req *managementv1.GetJobProgressRequest) (*managementv1.JobProgress, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJobProgress(ctx, req)
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	out := &managementv1.JobProgress{Progress: j.Progress}
	if j.ProgressInfo != "" {
		out.ProgressInfo = &j.ProgressInfo
	}
	return out, nil
}

// GetJobObjectIds implements Job_GetJobObjectIds: the context objects.
func (s *service) GetJobObjectIds(ctx context.Context, req *managementv1.GetJobObjectIdsRequest) (*managementv1.JobObjectIds, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJobObjectIds(ctx, req)
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return &managementv1.JobObjectIds{ObjectIds: int32s(j.Objects)}, nil
}

// GetJobArtifacts implements Job_GetJobArtifacts: path relative, src the
// absolute URL path of the download.
func (s *service) GetJobArtifacts(ctx context.Context, req *managementv1.GetJobArtifactsRequest) (*managementv1.JobArtifactList, error) {
	if s.jobs == nil {
		return s.UnimplementedManagementServiceServer.GetJobArtifacts(ctx, req)
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	out := &managementv1.JobArtifactList{Files: make([]*managementv1.JobArtifact, 0, len(j.Artifacts))}
	for _, p := range j.Artifacts {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		src := fmt.Sprintf("%s/jobs/%d/artifacts/%s", BasePath, j.ID, strings.Join(segs, "/"))
		out.Files = append(out.Files, &managementv1.JobArtifact{Path: &p, Src: &src})
	}
	return out, nil
}

// job reads job id; the interceptor has checked the caller's grant on its
// branch (the RPC's access names the job as owner).
func (s *service) job(ctx context.Context, id int32) (jobs.Job, error) {
	j, err := s.jobs.Get(ctx, int64(id))
	if err != nil {
		return jobs.Job{}, s.toStatus(ctx, err)
	}
	return j, nil
}

func jobToProto(j jobs.Job) *managementv1.CmsJob {
	out := &managementv1.CmsJob{Id: int32(j.ID), Guid: j.GUID, Created: timestamppb.New(j.Created),
		Modified: timestamppb.New(j.Modified), Deleted: j.Deleted, Artifacts: len(j.Artifacts) > 0,
		BranchRef: int32(j.Branch), ScopeRefs: int32s(j.Scope), DefinitionRef: int32(j.Definition),
		ObjectCount: int32(len(j.Objects)), State: int32(j.State), Restarts: int32(j.Restarts)}
	if j.User != "" {
		out.User = &j.User
	}
	if j.UICulture != "" {
		out.UiCulture = &j.UICulture
	}
	if j.Trigger != 0 {
		t := int32(j.Trigger)
		out.TriggerRef = &t
	}
	if len(j.Objects) > 0 {
		o := int32(j.Objects[0])
		out.ObjectRef = &o
	}
	for _, t := range []struct {
		src *time.Time
		dst **timestamppb.Timestamp
	}{{j.Started, &out.Started}, {j.Finished, &out.Finished}, {j.RetainUntil, &out.RetainUntil}, {j.StartAfter, &out.StartAfter}} {
		if t.src != nil {
			*t.dst = timestamppb.New(*t.src)
		}
	}
	if j.StateMessage != "" {
		out.StateMessage = &j.StateMessage
	}
	if j.InstanceID != "" {
		out.InstanceId = &j.InstanceID
	}
	for _, p := range j.Parameters {
		name := p.Name
		out.Parameters = append(out.Parameters, &managementv1.JobParameter{Name: &name, Values: p.Values})
	}
	return out
}

func int64s(in []int32) []int64 {
	out := make([]int64, len(in))
	for i, v := range in {
		out[i] = int64(v)
	}
	return out
}

func int32s(in []int64) []int32 {
	out := make([]int32, len(in))
	for i, v := range in {
		out[i] = int32(v)
	}
	return out
}

func opt64(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}
