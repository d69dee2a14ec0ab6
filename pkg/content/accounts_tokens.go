package content

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// The bearer-token side of the accounts (pkg/auth token.go): a token
// names its user by object id and carries a stamp of the user's
// Credential, which digests the stored password hash and the token
// generation (AttrUserTokenGeneration). Account reads them for every
// bearer request; RevokeTokens (a logout) raises the generation, and a
// password change replaces the hash, so either revokes the user's tokens in
// every process at once.

// Account implements auth.Accounts: the current principal of the live
// user object id (two indexed reads, no password hash computed), or
// auth.ErrBadCredentials when id is no live user.
func (s *Service) Account(ctx context.Context, id int64) (auth.Principal, error) {
	if err := liveUser(ctx, s.st, id); err != nil {
		return auth.Principal{}, err
	}
	a, err := loadAccount(ctx, s.st, id)
	if err != nil {
		return auth.Principal{}, fmt.Errorf("content: account: %w", err)
	}
	if a.name == "" {
		return auth.Principal{}, auth.ErrBadCredentials
	}
	return a.principal(id, a.name), nil
}

// liveUser is nil when id is a live user object of the default branch,
// auth.ErrBadCredentials when it is not.
func liveUser(ctx context.Context, r store.Reader, id int64) error {
	o, err := r.GetObject(ctx, BranchDefault, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return auth.ErrBadCredentials
	case err != nil:
		return fmt.Errorf("content: account: %w", err)
	case o.Deleted || o.TypeID != TypeUser:
		return auth.ErrBadCredentials
	}
	return nil
}

// RevokeTokens implements auth.Accounts: it raises the token generation of
// user id (one transaction as user "system", with its change event), so
// every bearer token issued to the user before is refused.
func (s *Service) RevokeTokens(ctx context.Context, id int64) error {
	tx, err := s.st.Begin(ctx, store.TxMeta{User: "system", Comment: "revoke the bearer tokens of user " + strconv.FormatInt(id, 10),
		Branch: BranchDefault})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := liveUser(ctx, tx, id); err != nil {
		return err
	}
	a, err := loadAccount(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := tx.PutValues(ctx, store.Value{ObjectID: id, Branch: BranchDefault, AttributeID: AttrUserTokenGeneration,
		JSON: jsonOf(a.generation + 1)}); err != nil {
		return err
	}
	if _, err := commit(ctx, tx, Change{}, BranchDefault, changes.KindUpdated, []int64{id}); err != nil {
		return err
	}
	s.notifyUsers(true)
	return nil
}
