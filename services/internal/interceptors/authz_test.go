package interceptors

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	renderingv1 "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// chains is a resolver over a fixed branch tree: 4 ← 10 ← 11 (10 and 11
// are descendants of the default branch 4); anything else is NotFound.
type chains struct{ parent string }

func (chains) BranchChain(_ context.Context, branch string) ([]int64, error) {
	switch branch {
	case "4":
		return []int64{4}, nil
	case "10":
		return []int64{10, 4}, nil
	case "11":
		return []int64{11, 10, 4}, nil
	}
	return nil, status.Errorf(codes.NotFound, "branch %q", branch)
}

func (c chains) NewBranchParent(proto.Message) string { return c.parent }

// OwnerBranch: job 7 is on branch 11, comment 8 on the default branch 4;
// other ids are NotFound.
func (chains) OwnerBranch(_ context.Context, owner optionsv1.Owner, id int64) (int64, error) {
	switch {
	case owner == optionsv1.Owner_OWNER_JOB && (id == 7 || id == 9):
		return 11, nil
	case owner == optionsv1.Owner_OWNER_COMMENT && id == 8:
		return 4, nil
	}
	return 0, status.Errorf(codes.NotFound, "%v %d", owner, id)
}

// InstallationJob: job 9 and job definition 1204 act on the whole
// installation; job 9 is on branch 11 like job 7.
func (chains) InstallationJob(_ context.Context, req proto.Message) (bool, error) {
	switch r := req.(type) {
	case *managementv1.CreateJobRequest:
		return r.GetJobDefinitionId() == 1204, nil
	case interface{ GetJobId() int32 }:
		return r.GetJobId() == 9, nil
	}
	return false, nil
}

func TestAuthzUnary(t *testing.T) {
	mgmt := managementv1.ManagementService_ServiceDesc.ServiceName
	index := indexv1.IndexService_ServiceDesc.ServiceName
	delivery := deliveryv1.DeliveryBinaryService_ServiceDesc.ServiceName
	mgmtBin := managementv1.ManagementBinaryService_ServiceDesc.ServiceName
	az := &Authz{Resolvers: map[string]BranchResolver{mgmt: chains{parent: "10"}, mgmtBin: chains{}, index: chains{}, delivery: chains{}}}
	reader4 := auth.Principal{Name: "r4", Read: []int64{4}}
	reader10 := auth.Principal{Name: "r", Read: []int64{10}}
	writer10 := auth.Principal{Name: "w", Write: []int64{10}}
	writer11 := auth.Principal{Name: "w11", Write: []int64{11}}
	cases := []struct {
		name   string
		who    *auth.Principal
		method string
		req    proto.Message
		want   codes.Code
	}{
		{"no principal", nil, managementv1.ManagementService_GetBranches_FullMethodName, &managementv1.GetBranchesRequest{}, codes.Unauthenticated},
		{"undeclared method", &reader10, "/cms.management.v1.ManagementService/Nope", &managementv1.GetBranchesRequest{}, codes.PermissionDenied},
		{"authenticated", &auth.Principal{Name: "x"}, managementv1.ManagementService_GetBranches_FullMethodName, &managementv1.GetBranchesRequest{}, codes.OK},
		{"read on the branch", &reader10, managementv1.ManagementService_GetObject_FullMethodName, &managementv1.GetObjectRequest{Branch: "10"}, codes.OK},
		{"read inherited", &reader10, managementv1.ManagementService_GetObject_FullMethodName, &managementv1.GetObjectRequest{Branch: "11"}, codes.OK},
		{"read above the grant", &reader10, managementv1.ManagementService_GetObject_FullMethodName, &managementv1.GetObjectRequest{Branch: "4"}, codes.PermissionDenied},
		{"write with read only", &reader10, managementv1.ManagementService_CreateObjects_FullMethodName, &managementv1.CreateObjectsRequest{Branch: "10"}, codes.PermissionDenied},
		{"write", &writer10, managementv1.ManagementService_CreateObjects_FullMethodName, &managementv1.CreateObjectsRequest{Branch: "11"}, codes.OK},
		{"unknown branch: like one without the grant", &writer10, managementv1.ManagementService_CreateObjects_FullMethodName, &managementv1.CreateObjectsRequest{Branch: "99"}, codes.PermissionDenied},
		{"unknown branch read: like one without the grant", &reader10, managementv1.ManagementService_GetObject_FullMethodName, &managementv1.GetObjectRequest{Branch: "99"}, codes.PermissionDenied},
		{"admin skips resolving", &auth.Principal{Admin: true}, managementv1.ManagementService_CreateObjects_FullMethodName, &managementv1.CreateObjectsRequest{Branch: "99"}, codes.OK},
		{"delete needs the parent", &writer11, managementv1.ManagementService_DeleteBranch_FullMethodName, &managementv1.DeleteBranchRequest{Id: "11"}, codes.PermissionDenied},
		{"delete with write on the parent", &writer10, managementv1.ManagementService_DeleteBranch_FullMethodName, &managementv1.DeleteBranchRequest{Id: "11"}, codes.OK},
		{"create under a writable parent", &writer10, managementv1.ManagementService_CreateBranch_FullMethodName, &managementv1.CreateBranchRequest{}, codes.OK},
		{"create under a read-only parent", &reader10, managementv1.ManagementService_CreateBranch_FullMethodName, &managementv1.CreateBranchRequest{}, codes.PermissionDenied},
		{"Index branch field", &reader10, indexv1.IndexService_ObjectSearch_FullMethodName, &indexv1.ObjectSearchRequest{Branch: "11"}, codes.OK},
		{"optional branch filter unset", &auth.Principal{Name: "x"}, managementv1.ManagementService_GetComments_FullMethodName, &managementv1.GetCommentsRequest{}, codes.OK},
		{"job on a readable branch", &reader10, managementv1.ManagementService_GetJob_FullMethodName, &managementv1.GetJobRequest{JobId: 7}, codes.OK},
		{"job write with read only", &reader10, managementv1.ManagementService_DeleteJob_FullMethodName, &managementv1.DeleteJobRequest{JobId: 7}, codes.PermissionDenied},
		{"job write inherited", &writer10, managementv1.ManagementService_UpdateJob_FullMethodName, &managementv1.UpdateJobRequest{JobId: 7}, codes.OK},
		{"installation job by a writer", &writer10, managementv1.ManagementService_UpdateJob_FullMethodName, &managementv1.UpdateJobRequest{JobId: 9}, codes.PermissionDenied},
		{"installation job deleted by a writer", &writer10, managementv1.ManagementService_DeleteJob_FullMethodName, &managementv1.DeleteJobRequest{JobId: 9}, codes.PermissionDenied},
		{"installation job started by a writer", &writer10, managementv1.ManagementService_CreateJob_FullMethodName, &managementv1.CreateJobRequest{BranchId: 10, JobDefinitionId: 1204}, codes.PermissionDenied},
		{"branch job started by a writer", &writer10, managementv1.ManagementService_CreateJob_FullMethodName, &managementv1.CreateJobRequest{BranchId: 10, JobDefinitionId: 1200}, codes.OK},
		{"installation job by an admin", &auth.Principal{Admin: true}, managementv1.ManagementService_UpdateJob_FullMethodName, &managementv1.UpdateJobRequest{JobId: 9}, codes.OK},
		{"job stream", &reader10, managementv1.ManagementBinaryService_GetJobLogs_FullMethodName, &managementv1.GetJobLogsRequest{JobId: 7}, codes.OK},
		{"unknown job", &writer10, managementv1.ManagementService_GetJob_FullMethodName, &managementv1.GetJobRequest{JobId: 99}, codes.NotFound},
		{"job id unset", &writer10, managementv1.ManagementService_GetJob_FullMethodName, &managementv1.GetJobRequest{}, codes.NotFound},
		{"comment above the grant", &reader10, managementv1.ManagementService_GetComment_FullMethodName, &managementv1.GetCommentRequest{CommentId: 8}, codes.PermissionDenied},
		{"comment on a readable branch", &reader4, managementv1.ManagementService_DeleteComment_FullMethodName, &managementv1.DeleteCommentRequest{CommentId: 8}, codes.OK},
		{"admin skips the owner lookup", &auth.Principal{Admin: true}, managementv1.ManagementService_GetJob_FullMethodName, &managementv1.GetJobRequest{JobId: 99}, codes.OK},
		{"default branch refused", &reader10, deliveryv1.DeliveryBinaryService_GetBinary_FullMethodName, &deliveryv1.GetBinaryRequest{Id: 3}, codes.PermissionDenied},
		{"default branch", &reader4, deliveryv1.DeliveryBinaryService_GetBinary_FullMethodName, &deliveryv1.GetBinaryRequest{Id: 3}, codes.OK},
		{"no resolver for the group", &reader10, renderingv1.RenderingService_GetAppFontsCss_FullMethodName, &renderingv1.GetAppFontsCssRequest{BranchId: "10"}, codes.PermissionDenied},
	}
	for _, c := range cases {
		ctx := context.Background()
		if c.who != nil {
			ctx = auth.WithPrincipal(ctx, *c.who)
		}
		ran := false
		_, err := az.Unary(ctx, c.req, &grpc.UnaryServerInfo{FullMethod: c.method}, func(context.Context, any) (any, error) {
			ran = true
			return nil, nil
		})
		if status.Code(err) != c.want || ran != (c.want == codes.OK) {
			t.Errorf("%s: %v (handler ran: %v), want %v", c.name, err, ran, c.want)
		}
	}
}

// TestAuthzListNamesNoBranch: a list (Access.list) on a branch the caller
// may not read, or on one that does not exist, is not refused: the handler
// runs on NoBranch, so both get the empty list of a branch that does not
// exist; a readable branch and administrators keep theirs.
func TestAuthzListNamesNoBranch(t *testing.T) {
	index := indexv1.IndexService_ServiceDesc.ServiceName
	az := &Authz{Resolvers: map[string]BranchResolver{index: chains{}}}
	reader10 := auth.Principal{Name: "r", Read: []int64{10}}
	for _, c := range []struct {
		name, branch, want string
		who                auth.Principal
	}{
		{"readable", "11", "11", reader10},
		{"above the grant", "4", NoBranch, reader10},
		{"unknown", "99", NoBranch, reader10},
		{"unknown, as admin", "99", "99", auth.Principal{Name: "a", Admin: true}},
	} {
		var got string
		req := &indexv1.ObjectSearchRequest{Branch: c.branch}
		_, err := az.Unary(auth.WithPrincipal(context.Background(), c.who), req,
			&grpc.UnaryServerInfo{FullMethod: indexv1.IndexService_ObjectSearch_FullMethodName},
			func(_ context.Context, r any) (any, error) {
				got = r.(*indexv1.ObjectSearchRequest).GetBranch()
				return nil, nil
			})
		if err != nil || got != c.want {
			t.Errorf("%s: handler saw branch %q (%v), want %q", c.name, got, err, c.want)
		}
	}
}

// recvStream is a server stream whose client sent one request.
type recvStream struct {
	grpc.ServerStream
	ctx context.Context
	req proto.Message
}

func (s *recvStream) Context() context.Context { return s.ctx }

func (s *recvStream) RecvMsg(m any) error {
	proto.Merge(m.(proto.Message), s.req)
	return nil
}

// TestAuthzStream: a streaming RPC is checked on its first request
// message, before the handler can use it, and the refusal sticks.
func TestAuthzStream(t *testing.T) {
	az := &Authz{Resolvers: map[string]BranchResolver{renderingv1.RenderingService_ServiceDesc.ServiceName: chains{}}}
	info := &grpc.StreamServerInfo{FullMethod: renderingv1.RenderingService_GetAppFontsCss_FullMethodName, IsServerStream: true}
	for _, c := range []struct {
		branch string
		want   codes.Code
	}{{"11", codes.OK}, {"4", codes.PermissionDenied}} {
		ss := &recvStream{ctx: auth.WithPrincipal(context.Background(), auth.Principal{Name: "r", Read: []int64{10}}),
			req: &renderingv1.GetAppFontsCssRequest{BranchId: c.branch}}
		err := az.Stream(nil, ss, info, func(_ any, s grpc.ServerStream) error {
			var req renderingv1.GetAppFontsCssRequest
			if err := s.RecvMsg(&req); err != nil {
				if again := s.RecvMsg(&req); status.Code(again) != status.Code(err) {
					t.Errorf("branch %s: second RecvMsg after a refusal: %v", c.branch, again)
				}
				return err
			}
			return nil
		})
		if status.Code(err) != c.want {
			t.Errorf("branch %s: %v, want %v", c.branch, err, c.want)
		}
	}
	// Without credentials the stream is refused before the handler.
	err := az.Stream(nil, &recvStream{ctx: context.Background()}, info, func(any, grpc.ServerStream) error {
		t.Error("handler ran without a principal")
		return nil
	})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("no principal: %v", err)
	}
}

// BenchmarkAuthzUnary is the interceptor's own cost on a READ call by a
// user with a grant (the resolver answers from memory, as a cached chain).
func BenchmarkAuthzUnary(b *testing.B) {
	az := &Authz{Resolvers: map[string]BranchResolver{managementv1.ManagementService_ServiceDesc.ServiceName: chains{}}}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Name: "r", Read: []int64{10}})
	req := &managementv1.GetObjectRequest{Branch: "11", Id: "1"}
	info := &grpc.UnaryServerInfo{FullMethod: managementv1.ManagementService_GetObject_FullMethodName}
	h := func(context.Context, any) (any, error) { return nil, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := az.Unary(ctx, req, info, h); err != nil {
			b.Fatal(err)
		}
	}
}
