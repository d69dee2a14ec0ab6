package management

import (
	"context"

	"github.com/cmsplatform/cms/pkg/auth"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
)

// The caller's own account (not NovaDB operations; pkg/content
// accounts_password.go, docs/security.md "Own account"): GetAccount reads
// its flags and grants, ChangePassword changes its password.

// GetAccount implements Auth_GetAccount.
func (s *service) GetAccount(ctx context.Context, _ *managementv1.GetAccountRequest) (*managementv1.Account, error) {
	p, err := s.content.OwnAccount(ctx, caller(ctx))
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return toAccount(p), nil
}

// ChangePassword implements Auth_ChangePassword: the current password is
// checked by the login guard (throttled, not the credentials cache); the
// answer carries the first token of a new session when tokens are on, as
// the change revoked the caller's.
func (s *service) ChangePassword(ctx context.Context, req *managementv1.ChangePasswordRequest) (*managementv1.ChangePasswordResponse, error) {
	if s.tokens == nil {
		return s.UnimplementedManagementServiceServer.ChangePassword(ctx, req)
	}
	p, err := s.content.ChangeOwnPassword(ctx, caller(ctx), req.GetCurrentPassword(), req.GetNewPassword(), s.tokens.Guard())
	if err != nil {
		return nil, s.tokenError(ctx, err)
	}
	out := &managementv1.ChangePasswordResponse{}
	if t := s.tokens.Tokens(); t != nil {
		tok, err := t.Issue(p)
		if err != nil {
			return nil, s.tokenError(ctx, err)
		}
		ans, _ := s.tokenAnswer(ctx, tok, nil)
		out.Token = ans
	}
	return out, nil
}

func toAccount(p auth.Principal) *managementv1.Account {
	ids := func(in []int64) []int32 {
		out := make([]int32, len(in))
		for i, b := range in {
			out[i] = int32(b) //nolint:gosec // branch ids are int32 on the wire (CmsObject.id)
		}
		return out
	}
	return &managementv1.Account{UserId: int32(p.UserID), UserName: p.Name, Admin: p.Admin, Internal: p.Internal, //nolint:gosec // as above
		ReadBranches: ids(p.Read), WriteBranches: ids(p.Write)}
}
