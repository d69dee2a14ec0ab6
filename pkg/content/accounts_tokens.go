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
// every process at once. The same read gives the session record
// (AttrUserTokenSessions) a renewal writes through UpdateTokenSessions, so
// a renewed token's predecessor is refused in every process at once too.

// Account implements auth.Accounts: the current principal of the live
// user object id with its session record (two indexed reads, no password
// hash computed), or auth.ErrBadCredentials when id is no live user.
func (s *Service) Account(ctx context.Context, id int64) (auth.Principal, error) {
	return readAccount(ctx, s.st, id)
}

func readAccount(ctx context.Context, r store.Reader, id int64) (auth.Principal, error) {
	if err := liveUser(ctx, r, id); err != nil {
		return auth.Principal{}, err
	}
	a, err := loadAccount(ctx, r, id)
	if err != nil {
		return auth.Principal{}, fmt.Errorf("content: account: %w", err)
	}
	if a.name == "" {
		return auth.Principal{}, auth.ErrBadCredentials
	}
	p := a.principal(id, a.name)
	p.TokenSessions = a.sessions
	return p, nil
}

// UpdateTokenSessions implements auth.Accounts: in one transaction (as
// user "system", with its change event) it reads the account of user id,
// calls update and, when update asks to, stores the session record it
// returns. Write transactions are serialized, in every process, so two
// renewals of one session see each other. Nothing is written when update
// fails or asks for no write.
func (s *Service) UpdateTokenSessions(ctx context.Context, id int64, update func(auth.Principal) (string, bool, error)) error {
	tx, err := s.st.Begin(ctx, store.TxMeta{User: "system", Comment: "renew a bearer token of user " + strconv.FormatInt(id, 10),
		Branch: BranchDefault})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	p, err := readAccount(ctx, tx, id)
	if err != nil {
		return err
	}
	record, write, err := update(p)
	if err != nil || !write {
		return err
	}
	if err := tx.PutValues(ctx, store.Value{ObjectID: id, Branch: BranchDefault, AttributeID: AttrUserTokenSessions,
		JSON: jsonOf(record)}); err != nil {
		return err
	}
	// The credential did not change: the Basic cache keeps its entries.
	_, err = commit(ctx, tx, Change{}, BranchDefault, changes.KindUpdated, []int64{id})
	return err
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
// user id and empties its session record (one transaction as user
// "system", with its change event), so every bearer token issued to the
// user before is refused.
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
	if _, err := tx.DeleteValues(ctx, BranchDefault, []int64{id}, store.ValueFilter{AttributeIDs: []int64{AttrUserTokenSessions}}); err != nil {
		return err
	}
	if _, err := commit(ctx, tx, Change{}, BranchDefault, changes.KindUpdated, []int64{id}); err != nil {
		return err
	}
	s.notifyUsers(true)
	return nil
}
