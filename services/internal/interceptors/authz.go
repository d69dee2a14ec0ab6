package interceptors

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/cmsplatform/cms/pkg/auth"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// BranchResolver resolves the branches of one API group for Authz.
// Management and Rendering resolve from the store (the one they read);
// Delivery and Index from the index (they do not need the store).
type BranchResolver interface {
	// BranchChain returns the branch named by branch (id or
	// ApiIdentifier) followed by its ancestors up to the default branch.
	// Errors are gRPC status errors (an unknown branch is NotFound).
	BranchChain(ctx context.Context, branch string) ([]int64, error)
}

// NewBranchParentResolver is implemented by resolvers of groups with an
// RPC declaring new_branch_parent: it names the parent of the branch req
// creates.
type NewBranchParentResolver interface {
	NewBranchParent(req proto.Message) string
}

// OwnerBranchResolver is implemented by resolvers of groups with RPCs
// declaring an owner (a job, comment or webhook id): it returns the branch the
// resource belongs to. Errors are gRPC status errors (an unknown id is
// NotFound).
type OwnerBranchResolver interface {
	OwnerBranch(ctx context.Context, owner optionsv1.Owner, id int64) (int64, error)
}

// InstallationJobResolver is implemented by resolvers of groups with an
// RPC declaring installation_job_admin: it reports whether the job req
// starts, changes or deletes acts on the whole installation (its
// definition's kind). Errors are gRPC status errors.
type InstallationJobResolver interface {
	InstallationJob(ctx context.Context, req proto.Message) (bool, error)
}

// defaultBranch is the id of the default branch, the root of every chain.
const defaultBranch = "4"

// ReadYourWritesResolver is implemented by resolvers of groups whose
// requests may ask for a minimum index version (the index lags the store):
// the interceptor calls it before resolving, so that a branch created by
// the write the caller waits for is found.
type ReadYourWritesResolver interface {
	ReadYourWrites(ctx context.Context, req proto.Message) error
}

// Authz enforces the permission every RPC declares with the method option
// (cms.options.v1.access), after Auth put the principal in the context and
// before the handler runs:
//
//   - no principal: 401 (fail closed);
//   - a method without the option, or with PERMISSION_UNSPECIFIED: 403;
//   - AUTHENTICATED: any principal; the handler filters;
//   - ADMIN: administrators only, else 403;
//   - CREDENTIALS: not checked (the RPC authenticates the credentials it
//     is given, IssueToken);
//   - installation_job_admin: a job acting on the whole installation
//     (InstallationJobResolver) needs an administrator, else 403, after the
//     branch permission below;
//   - READ/WRITE: administrators, or a grant (pkg/auth.Principal.Allowed)
//     on the branch the access names or an ancestor: the request field
//     branch_field, the parent of a new branch, the branch of the job,
//     comment or webhook whose id is in owner_field, or the default branch; an
//     unknown resource (job, comment, webhook id) is the resolver's 404; an
//     unknown branch is refused like one without the grant, 403, so that
//     the answer does not tell which branches exist. An unset, empty or 0
//     branch_field leaves the check to the handler (an optional branch
//     filter);
//   - list with READ: a branch the caller may not read (or that does not
//     exist) is not refused: the request goes on naming NoBranch, and the
//     handler answers the empty list of an unknown branch (the same answer
//     administrators get for one).
//
// Methods whose full name starts with one of Public are not checked.
// Resolvers maps a service's full name ("cms.index.v1.IndexService") to
// its group's resolver; a READ/WRITE method of a service without one
// answers 403 to everybody but administrators.
type Authz struct {
	Resolvers map[string]BranchResolver
	Public    []string
}

// access returns the declared access of fullMethod ("/pkg.Service/Method").
func (a *Authz) access(fullMethod string) (*optionsv1.Access, string) {
	return methodAccess(fullMethod)
}

// methods caches the declared access of full method names (nil: none).
var methods sync.Map

// methodAccess returns the declared access of fullMethod and its service.
func methodAccess(fullMethod string) (*optionsv1.Access, string) {
	svc, method, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if v, ok := methods.Load(fullMethod); ok {
		acc, _ := v.(*optionsv1.Access)
		return acc, svc
	}
	var acc *optionsv1.Access
	if d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc)); err == nil {
		if sd, ok := d.(protoreflect.ServiceDescriptor); ok {
			if md := sd.Methods().ByName(protoreflect.Name(method)); md != nil {
				acc = MethodAccess(md)
			}
		}
	}
	methods.Store(fullMethod, acc)
	return acc, svc
}

// MethodAccess returns the access option declared on md, or nil.
func MethodAccess(md protoreflect.MethodDescriptor) *optionsv1.Access {
	acc, _ := proto.GetExtension(md.Options(), optionsv1.E_Access).(*optionsv1.Access)
	if acc == nil || acc.GetPermission() == optionsv1.Permission_PERMISSION_UNSPECIFIED {
		return nil
	}
	return acc
}

func (a *Authz) public(method string) bool {
	for _, p := range a.Public {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// needsRequest reports whether the check of fullMethod for the caller in
// ctx reads the request message.
func (a *Authz) needsRequest(ctx context.Context, fullMethod string) bool {
	acc, _ := a.access(fullMethod)
	p, ok := auth.FromContext(ctx)
	if acc == nil || !ok || p.Admin {
		return false
	}
	perm := acc.GetPermission()
	return perm == optionsv1.Permission_PERMISSION_READ || perm == optionsv1.Permission_PERMISSION_WRITE
}

// check enforces fullMethod's access for the caller in ctx; req is the
// request message (nil when needsRequest is false).
func (a *Authz) check(ctx context.Context, fullMethod string, req any) error {
	if a.public(fullMethod) || CredentialsMethod(fullMethod) {
		return nil // a credentials method checks its own (IssueToken)
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "this operation needs HTTP Basic credentials or a bearer token")
	}
	acc, svc := a.access(fullMethod)
	if acc == nil {
		return status.Errorf(codes.PermissionDenied, "%s declares no access: refused", fullMethod)
	}
	perm := acc.GetPermission()
	switch {
	case p.Admin, perm == optionsv1.Permission_PERMISSION_AUTHENTICATED:
		return nil
	case perm == optionsv1.Permission_PERMISSION_ADMIN:
		return status.Errorf(codes.PermissionDenied, "user %q is no administrator", p.Name)
	}
	mode := auth.AccessRead
	if perm == optionsv1.Permission_PERMISSION_WRITE {
		mode = auth.AccessWrite
	}
	res := a.Resolvers[svc]
	if res == nil {
		return status.Errorf(codes.PermissionDenied, "user %q: branch permissions cannot be checked here", p.Name)
	}
	msg, _ := req.(proto.Message)
	branch, what, err := branchOf(ctx, p, acc, res, msg)
	if err != nil || branch == "" {
		return err
	}
	if rw, ok := res.(ReadYourWritesResolver); ok && msg != nil {
		if err := rw.ReadYourWrites(ctx, msg); err != nil {
			return err
		}
	}
	chain, err := res.BranchChain(ctx, branch)
	if status.Code(err) == codes.NotFound {
		// A branch that does not exist looks like one the caller may not
		// read: the answer must not tell which branches exist.
		chain, err = nil, nil
	}
	if err != nil {
		return err
	}
	if acc.GetAncestorsOnly() {
		chain, what = chain[min(1, len(chain)):], "the parent of branch"
	}
	if !p.Allowed(mode, chain) {
		if acc.GetList() && mode == auth.AccessRead {
			return nameNoBranch(msg, acc.GetBranchField())
		}
		return status.Errorf(codes.PermissionDenied, "user %q has no %s permission on %s %s", p.Name, mode, what, branch)
	}
	if acc.GetInstallationJobAdmin() {
		return installationJob(ctx, p, res, msg)
	}
	return nil
}

// NoBranch is the branch a list request names when its caller may not read
// the branch it asked for (Access.list): no branch has this id, so the
// handler answers the empty list of a branch that does not exist.
const NoBranch = "0"

// nameNoBranch makes list request msg name NoBranch in its string field.
func nameNoBranch(msg proto.Message, field string) error {
	if msg == nil {
		return status.Error(codes.Internal, "a list without its request cannot be filtered")
	}
	m := msg.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(field))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return status.Errorf(codes.Internal, "list branch_field %q is no string field", field)
	}
	m.Set(fd, protoreflect.ValueOfString(NoBranch))
	return nil
}

// installationJob refuses a job acting on the whole installation to p, who
// is no administrator.
func installationJob(ctx context.Context, p auth.Principal, res BranchResolver, msg proto.Message) error {
	ir, ok := res.(InstallationJobResolver)
	if !ok || msg == nil {
		return status.Errorf(codes.PermissionDenied, "user %q: the job's reach cannot be checked here", p.Name)
	}
	wide, err := ir.InstallationJob(ctx, msg)
	if err != nil {
		return err
	}
	if wide {
		return status.Errorf(codes.PermissionDenied, "user %q is no administrator: this job acts on the whole installation (file clean-up, re-index)", p.Name)
	}
	return nil
}

// branchOf returns the branch acc checks for request msg of caller p and
// how to name it in a refusal; "" leaves the check to the handler (an unset optional
// branch_field).
func branchOf(ctx context.Context, p auth.Principal, acc *optionsv1.Access, res BranchResolver, msg proto.Message) (branch, what string, err error) {
	switch {
	case acc.GetNewBranchParent():
		pr, ok := res.(NewBranchParentResolver)
		if !ok || msg == nil {
			return "", "", status.Errorf(codes.PermissionDenied, "user %q: the parent branch cannot be checked here", p.Name)
		}
		return pr.NewBranchParent(msg), "branch", nil
	case acc.GetOwner() != optionsv1.Owner_OWNER_UNSPECIFIED:
		or, ok := res.(OwnerBranchResolver)
		if !ok || msg == nil {
			return "", "", status.Errorf(codes.PermissionDenied, "user %q: the branch of a %s cannot be checked here", p.Name, ownerName(acc.GetOwner()))
		}
		id, _ := strconv.ParseInt(fieldString(msg, acc.GetOwnerField()), 10, 64)
		b, err := or.OwnerBranch(ctx, acc.GetOwner(), id)
		if err != nil {
			return "", "", err
		}
		return strconv.FormatInt(b, 10), fmt.Sprintf("the branch of %s %d, branch", ownerName(acc.GetOwner()), id), nil
	case acc.GetDefaultBranch():
		return defaultBranch, "the default branch", nil
	}
	return fieldString(msg, acc.GetBranchField()), "branch", nil
}

// ownerName is how refusals name an owner kind ("job", "comment").
func ownerName(o optionsv1.Owner) string {
	return strings.ToLower(strings.TrimPrefix(o.String(), "OWNER_"))
}

// fieldString returns the top-level field name of msg as a branch
// identifier: a string as is, an integer in decimal; "" when unset, empty
// or 0.
func fieldString(msg proto.Message, name string) string {
	if msg == nil || name == "" {
		return ""
	}
	m := msg.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.IsList() || fd.IsMap() || !m.Has(fd) {
		return ""
	}
	v := m.Get(fd)
	switch fd.Kind() {
	case protoreflect.StringKind:
		return strings.TrimSpace(v.String())
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		if v.Int() != 0 {
			return strconv.FormatInt(v.Int(), 10)
		}
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		if v.Uint() != 0 {
			return strconv.FormatUint(v.Uint(), 10)
		}
	}
	return ""
}

// Check enforces the access fullMethod declares for the caller in ctx and
// request req, for code that answers without the gRPC interceptors (the
// Delivery HTTP cache).
func (a *Authz) Check(ctx context.Context, fullMethod string, req proto.Message) error {
	return a.check(ctx, fullMethod, req)
}

// Unary implements grpc.UnaryServerInterceptor.
func (a *Authz) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := a.check(ctx, info.FullMethod, req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream implements grpc.StreamServerInterceptor. When the check reads
// the request, it runs on the first received message, before the handler
// sees it.
func (a *Authz) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	if a.public(info.FullMethod) || !a.needsRequest(ctx, info.FullMethod) {
		if err := a.check(ctx, info.FullMethod, nil); err != nil {
			return err
		}
		return h(srv, ss)
	}
	return h(srv, &checkedStream{ServerStream: ss, check: func(m any) error { return a.check(ctx, info.FullMethod, m) }})
}

// checkedStream runs check on the first message received; a refusal is
// returned by every later RecvMsg too.
type checkedStream struct {
	grpc.ServerStream
	check   func(any) error
	checked bool
	err     error
}

func (s *checkedStream) RecvMsg(m any) error {
	if s.err != nil {
		return s.err
	}
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if !s.checked {
		s.checked = true
		s.err = s.check(m)
	}
	return s.err
}
