package management

import (
	"context"
	"errors"

	"github.com/cmsplatform/cms/pkg/auth"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"github.com/cmsplatform/cms/services/internal/interceptors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Bearer tokens (not NovaDB operations; pkg/auth token.go and session.go,
// docs/security.md "Bearer tokens"): IssueToken trades credentials for a
// token (a new session), RenewToken trades a valid token for its successor
// (the older one is refused from then on), Logout revokes every token of
// the caller.

// Limits of IssueToken's credentials: longer ones are refused as wrong
// without a password check (bcrypt reads at most 72 bytes).
const (
	maxTokenUserBytes     = 256
	maxTokenPasswordBytes = 72
)

// IssueToken implements Auth_IssueToken. It declares
// PERMISSION_CREDENTIALS: nothing authenticated the call; the credentials
// are the body's user and password, or the Basic credentials of the
// request when both are empty, checked by the login guard (throttled like
// Basic at the edge).
func (s *service) IssueToken(ctx context.Context, req *managementv1.IssueTokenRequest) (*managementv1.AuthToken, error) {
	if s.tokens == nil {
		return s.UnimplementedManagementServiceServer.IssueToken(ctx, req)
	}
	user, password := req.GetUser(), req.GetPassword()
	if user == "" && password == "" {
		md, _ := metadata.FromIncomingContext(ctx)
		var h string
		if v := md.Get("authorization"); len(v) > 0 {
			h = v[0]
		}
		var err error
		if user, password, err = auth.ParseBasic(h); err != nil {
			return nil, interceptors.AuthStatus(ctx, err)
		}
	}
	if user == "" {
		return nil, interceptors.AuthStatus(ctx, auth.ErrNoCredentials)
	}
	if len(user) > maxTokenUserBytes || len(password) > maxTokenPasswordBytes {
		return nil, interceptors.AuthStatus(ctx, auth.ErrBadCredentials)
	}
	tok, err := s.tokens.IssueToken(ctx, user, password)
	return s.tokenAnswer(ctx, tok, err)
}

// RenewToken implements Auth_RenewToken: the successor of the caller's
// token, which is refused from then on (pkg/auth session.go; the call was
// authenticated as a renewal, auth.WithRenewal).
func (s *service) RenewToken(ctx context.Context, req *managementv1.RenewTokenRequest) (*managementv1.AuthToken, error) {
	if s.tokens == nil {
		return s.UnimplementedManagementServiceServer.RenewToken(ctx, req)
	}
	p, _ := auth.FromContext(ctx)
	tok, err := s.tokens.RenewToken(ctx, p)
	return s.tokenAnswer(ctx, tok, err)
}

// Logout implements Auth_Logout: every token of the caller's user is
// refused from now on, in every process.
func (s *service) Logout(ctx context.Context, req *managementv1.LogoutRequest) (*managementv1.LogoutResponse, error) {
	if s.tokens == nil {
		return s.UnimplementedManagementServiceServer.Logout(ctx, req)
	}
	p, _ := auth.FromContext(ctx)
	if err := s.tokens.Logout(ctx, p); err != nil {
		return nil, s.tokenError(ctx, err)
	}
	return &managementv1.LogoutResponse{}, nil
}

func (s *service) tokenAnswer(ctx context.Context, tok auth.Token, err error) (*managementv1.AuthToken, error) {
	if err != nil {
		return nil, s.tokenError(ctx, err)
	}
	return &managementv1.AuthToken{Token: tok.Token, ExpiresAt: timestamppb.New(tok.ExpiresAt)}, nil
}

// tokenError maps the errors of the token operations.
func (s *service) tokenError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, auth.ErrTokensOff):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, auth.ErrNoTokenUser):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, auth.ErrBadCredentials), errors.Is(err, auth.ErrNoCredentials):
		return interceptors.AuthStatus(ctx, err)
	}
	var retry *auth.RetryError
	if errors.As(err, &retry) {
		return interceptors.AuthStatus(ctx, err)
	}
	return s.toStatus(ctx, err)
}
