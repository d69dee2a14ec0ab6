package content

import (
	"context"
	"errors"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// A user's own account (Auth_GetAccount, Auth_ChangePassword): every
// user reads its own flags and grants and changes its own password, which
// otherwise only administrators write (security.go). The current password
// is checked like a login (throttled by the login guard the caller
// passes), so a stolen bearer token alone cannot take the account over.

// maxPasswordBytes is bcrypt's limit (hashPassword refuses longer ones).
const maxPasswordBytes = 72

// OwnAccount returns the current account of caller's own user object as
// stored now (flags and grants may have changed since the caller
// authenticated). A caller without a user object (a bootstrap
// administrator without a store) gets what it authenticated with.
func (s *Service) OwnAccount(ctx context.Context, caller auth.Principal) (auth.Principal, error) {
	if caller.UserID <= 0 {
		return caller, nil
	}
	p, err := readAccount(ctx, s.st, caller.UserID)
	if errors.Is(err, auth.ErrBadCredentials) { // deleted since the request was authenticated
		return auth.Principal{}, notFoundf("the caller's user object %d does not exist any more", caller.UserID)
	}
	p.TokenSessions = ""
	return p, err
}

// ChangeOwnPassword sets the password of caller's own user object to next
// after check accepted current for caller's user name (the login guard:
// a *auth.RetryError when it is locked). It writes one transaction as the
// caller, revoking every bearer token of the user (the credential stamp
// digests the password hash), and returns the account's new principal,
// e.g. to issue a fresh token. A wrong current password is ErrInvalid, not
// an authentication failure: the caller stays signed in.
func (s *Service) ChangeOwnPassword(ctx context.Context, caller auth.Principal, current, next string, check auth.Authenticator) (auth.Principal, error) {
	switch {
	case caller.ActingAs != "":
		return auth.Principal{}, forbiddenf("a password is changed by its user, not by a caller acting for user %q", caller.ActingAs)
	case caller.UserID <= 0:
		return auth.Principal{}, invalidf("this caller has no user object and no password to change")
	case current == "" || len(current) > maxPasswordBytes:
		return auth.Principal{}, invalidf("the current password is wrong")
	}
	hash, err := hashPassword(next) // a bad new password is refused before the check counts
	if err != nil {
		return auth.Principal{}, err
	}
	checked, err := check.Authenticate(ctx, caller.Name, current)
	switch {
	case errors.Is(err, auth.ErrBadCredentials):
		return auth.Principal{}, invalidf("the current password is wrong")
	case err != nil:
		return auth.Principal{}, err
	case checked.UserID != caller.UserID:
		return auth.Principal{}, invalidf("the current password is wrong")
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: caller.Name, Comment: "change the password of " + strings.TrimSpace(caller.Name),
		Branch: BranchDefault})
	if err != nil {
		return auth.Principal{}, err
	}
	defer func() { _ = tx.Rollback() }()
	if err := liveUser(ctx, tx, caller.UserID); err != nil {
		return auth.Principal{}, invalidf("this caller has no user object and no password to change")
	}
	if err := tx.PutValues(ctx, store.Value{ObjectID: caller.UserID, Branch: BranchDefault, AttributeID: AttrUserPassword,
		JSON: jsonOf(hash)}); err != nil {
		return auth.Principal{}, err
	}
	p, err := readAccount(ctx, tx, caller.UserID)
	if err != nil {
		return auth.Principal{}, err
	}
	if _, err := commit(ctx, tx, Change{}, BranchDefault, changes.KindUpdated, []int64{caller.UserID}); err != nil {
		return auth.Principal{}, err
	}
	s.notifyUsers(true)
	p.TokenSessions = ""
	return p, nil
}
