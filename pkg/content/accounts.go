package content

// # Users and permissions
//
// A user is an object of type TypeUser (110) on the default branch 4. Its
// attributes:
//
//	1000 attributeName        display name (language dependent)
//	1100 attributeUserName    login name, compared without case
//	1101 userPassword         write-only; stored as a bcrypt hash, never read
//	1102 userAdmin            Boolean: may do everything
//	1103 userInternalAccess   Boolean: may act for another user (X-CmsApi-Username)
//	1104 userReadBranches     ObjRef → branches, multi: readable branches
//	1105 userWriteBranches    ObjRef → branches, multi: writable (and readable) branches
//
// A grant on a branch covers its descendants too (pkg/auth.Principal.Allowed).
// Clients create a user with Cms_CreateObjects on branch 4 (typeRef 110),
// sending the password in plain text as a value of 1101; change it with
// Cms_UpdateObjects (null removes it). Only administrators write users and
// the security attributes (security.go). Authenticate reads users from the
// store on every call; pkg/auth.Cached in front of it keeps results for a
// minute, and the service calls the WithUsersChanged hook after every
// committed write that touched a user so the cache can be flushed.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// timingHash is compared when no password hash exists, so that an unknown
// user costs as much as a wrong password (the hash of a random sentence).
const timingHash = "$2a$10$Djn8mTrgJonFF7GfeqeXhO/6OwUcns9qHt6cUb5XscLc3lSUgK8xu"

// Option configures a Service.
type Option func(*Service)

// WithUsersChanged sets fn, called after every committed write that
// created, changed or deleted a user object (e.g. to flush an
// authentication cache). It must be fast and safe for concurrent use.
func WithUsersChanged(fn func()) Option {
	return func(s *Service) { s.usersChanged = fn }
}

func (s *Service) notifyUsers(touched bool) {
	if touched && s.usersChanged != nil {
		s.usersChanged()
	}
}

// userRow is a live user object with its user name.
type userRow struct {
	id   int64
	name string
}

// listUsers returns the live users of the default branch (two queries).
func listUsers(ctx context.Context, r store.Reader) ([]userRow, error) {
	live := false
	objs, err := r.ListObjects(ctx, BranchDefault, store.ObjectQuery{TypeIDs: []int64{TypeUser}, Deleted: &live})
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(objs))
	for i, o := range objs {
		ids[i] = o.ID
	}
	vals, err := r.ListValues(ctx, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrUserName}})
	if err != nil {
		return nil, err
	}
	out := make([]userRow, 0, len(vals))
	for _, v := range vals {
		var n string
		if json.Unmarshal(v.JSON, &n) == nil && n != "" {
			out = append(out, userRow{id: v.ObjectID, name: n})
		}
	}
	return out, nil
}

// findUsers returns the live users whose user name equals name without
// case.
func findUsers(ctx context.Context, r store.Reader, name string) ([]userRow, error) {
	all, err := listUsers(ctx, r)
	if err != nil {
		return nil, err
	}
	var hits []userRow
	for _, u := range all {
		if strings.EqualFold(u.name, strings.TrimSpace(name)) {
			hits = append(hits, u)
		}
	}
	return hits, nil
}

// account is the security attributes of one user.
type account struct {
	name            string
	hash            string
	admin, internal bool
	read, write     []int64
	generation      int64  // AttrUserTokenGeneration
	sessions        string // AttrUserTokenSessions
}

func loadAccount(ctx context.Context, r store.Reader, id int64) (account, error) {
	vals, err := r.ListValues(ctx, BranchDefault, []int64{id}, store.ValueFilter{AttributeIDs: []int64{AttrUserName,
		AttrUserPassword, AttrUserAdmin, AttrUserInternal, AttrUserReadBranches, AttrUserWriteBranches, AttrUserTokenGeneration, AttrUserTokenSessions}})
	if err != nil {
		return account{}, err
	}
	var a account
	for _, v := range vals {
		switch v.AttributeID {
		case AttrUserName:
			_ = json.Unmarshal(v.JSON, &a.name)
		case AttrUserTokenGeneration:
			_ = json.Unmarshal(v.JSON, &a.generation)
		case AttrUserTokenSessions:
			a.sessions = plainJSONString(v.JSON)
		case AttrUserPassword:
			_ = json.Unmarshal(v.JSON, &a.hash)
		case AttrUserAdmin:
			_ = json.Unmarshal(v.JSON, &a.admin)
		case AttrUserInternal:
			_ = json.Unmarshal(v.JSON, &a.internal)
		case AttrUserReadBranches, AttrUserWriteBranches:
			b, err := strconv.ParseInt(strings.TrimSpace(string(v.JSON)), 10, 64)
			if err != nil {
				continue
			}
			if v.AttributeID == AttrUserReadBranches {
				a.read = append(a.read, b)
			} else {
				a.write = append(a.write, b)
			}
		}
	}
	return a, nil
}

// plainJSONString is the string b holds. Read on every bearer request, a
// session record (up to 4 KB of hex digits, digits, colons and spaces) has
// no escapes: its bytes are taken between the quotes without a decoder.
func plainJSONString(b []byte) string {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && !bytes.ContainsAny(b[1:n-1], "\\\"") {
		return string(b[1 : n-1])
	}
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

// Authenticate implements auth.Authenticator over the user objects: the
// live user named user (without case) whose stored bcrypt hash matches
// password, with the rights stored on it. An unknown user, a user without a
// password, a wrong password and a name shared by several users are all
// auth.ErrBadCredentials (bcrypt runs in every case, so timing does not
// tell them apart).
func (s *Service) Authenticate(ctx context.Context, user, password string) (auth.Principal, error) {
	hits, err := findUsers(ctx, s.st, user)
	if err != nil {
		return auth.Principal{}, fmt.Errorf("content: authenticate: %w", err)
	}
	if len(hits) != 1 {
		if len(hits) > 1 {
			s.log.Warn("login refused: several users share the user name", "user", user, "count", len(hits))
		}
		_ = bcrypt.CompareHashAndPassword([]byte(timingHash), []byte(password))
		return auth.Principal{}, auth.ErrBadCredentials
	}
	a, err := loadAccount(ctx, s.st, hits[0].id)
	if err != nil {
		return auth.Principal{}, fmt.Errorf("content: authenticate: %w", err)
	}
	hash := a.hash
	if hash == "" {
		hash = timingHash
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil || a.hash == "" {
		return auth.Principal{}, auth.ErrBadCredentials
	}
	return a.principal(hits[0].id, hits[0].name), nil
}

// principal is the principal of the user id named name with account a.
func (a account) principal(id int64, name string) auth.Principal {
	return auth.Principal{Name: name, Admin: a.admin, Internal: a.internal, Read: a.read, Write: a.write, UserID: id,
		Credential: a.credential()}
}

// credential digests the password hash and the token generation
// (auth.Principal.Credential): either changing revokes the user's bearer
// tokens. Without a password there is none (no token is accepted).
func (a account) credential() string {
	if a.hash == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "cms-credential\x00%s\x00%d", a.hash, a.generation)
	return hex.EncodeToString(h.Sum(nil))
}

// UserSpec is a user for EnsureUser.
type UserSpec struct {
	Name     string
	Password string
	Admin    bool
	Internal bool
}

// EnsureUser makes sure a live user named spec.Name exists on the default
// branch whose password is spec.Password and who has at least spec's Admin
// and Internal rights; it is how the configured administrator becomes a
// user object. It writes (one transaction, as user "system") only what
// differs and reports whether it wrote, so repeated calls with the same
// spec are no-ops. Several users with that name are ErrAmbiguous.
func (s *Service) EnsureUser(ctx context.Context, spec UserSpec) (bool, error) {
	if strings.TrimSpace(spec.Name) == "" {
		return false, invalidf("user name is empty")
	}
	hash, err := hashPassword(spec.Password)
	if err != nil {
		return false, err
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: "system", Comment: "ensure user " + spec.Name, Branch: BranchDefault})
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	hits, err := findUsers(ctx, tx, spec.Name)
	if err != nil {
		return false, err
	}
	row := func(id, attr, lang int64, v any) store.Value {
		return store.Value{ObjectID: id, Branch: BranchDefault, AttributeID: attr, Language: lang, JSON: jsonOf(v)}
	}
	var put []store.Value
	var id int64
	kind := changes.KindUpdated
	switch len(hits) {
	case 0:
		ids, err := tx.NewObjectIDs(ctx, 1)
		if err != nil {
			return false, err
		}
		id, kind = ids[0], changes.KindCreated
		if err := tx.PutObjects(ctx, store.Object{ID: id, Branch: BranchDefault, TypeID: TypeUser, GUID: newGUID()}); err != nil {
			return false, err
		}
		put = append(put, row(id, AttrName, LanguageEnUS, spec.Name), row(id, AttrUserName, 0, spec.Name),
			row(id, AttrUserPassword, 0, hash))
	case 1:
		id = hits[0].id
		a, err := loadAccount(ctx, tx, id)
		if err != nil {
			return false, err
		}
		if a.hash == "" || bcrypt.CompareHashAndPassword([]byte(a.hash), []byte(spec.Password)) != nil {
			put = append(put, row(id, AttrUserPassword, 0, hash))
		}
		spec.Admin = spec.Admin && !a.admin
		spec.Internal = spec.Internal && !a.internal
	default:
		return false, fmt.Errorf("%w: %d users are named %q", ErrAmbiguous, len(hits), spec.Name)
	}
	if spec.Admin {
		put = append(put, row(id, AttrUserAdmin, 0, true))
	}
	if spec.Internal {
		put = append(put, row(id, AttrUserInternal, 0, true))
	}
	if len(put) == 0 {
		return false, nil
	}
	if err := tx.PutValues(ctx, put...); err != nil {
		return false, err
	}
	if _, err := commit(ctx, tx, Change{}, BranchDefault, kind, []int64{id}); err != nil {
		return false, err
	}
	s.notifyUsers(true)
	return true, nil
}

// BranchChain resolves a branch identifier (ID, GUID or ApiIdentifier) and
// returns its chain: the branch, its parent, … up to the default branch.
// This is what pkg/auth.Principal.Allowed checks.
func (s *Service) BranchChain(ctx context.Context, branch string) ([]int64, error) {
	v, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return nil, err
	}
	return v.chain, nil
}

// AllBranchChains returns the chain of every live branch (one read of the
// branch tree), e.g. to decide which branches a user may read.
func (s *Service) AllBranchChains(ctx context.Context) (map[int64][]int64, error) {
	branches, err := loadBranches(ctx, s.st)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]int64, len(branches))
	for id := range branches {
		if v, err := newView(s.st, branches, id); err == nil {
			out[id] = v.chain
		}
	}
	return out, nil
}

// readableBranches is the filter of a list spanning branches for caller:
// the branches it may read (auth.Principal.CanRead over every live
// branch); nil, everything, for an administrator or a trusted internal
// read (no caller).
func (s *Service) readableBranches(ctx context.Context, caller *auth.Principal) (func(branch int64) bool, error) {
	if caller == nil || caller.Admin {
		return nil, nil
	}
	chains, err := s.AllBranchChains(ctx)
	if err != nil {
		return nil, err
	}
	return caller.CanRead(chains), nil
}

// ReadableBranches is readableBranches for the domains built on this one
// (pkg/jobs lists jobs of the branches the caller may read).
func (s *Service) ReadableBranches(ctx context.Context, caller *auth.Principal) (func(branch int64) bool, error) {
	return s.readableBranches(ctx, caller)
}

// BranchChains returns the chains of the given branch ids (one read of the
// branch tree); ids that are not branches are absent.
func (s *Service) BranchChains(ctx context.Context, ids []int64) (map[int64][]int64, error) {
	branches, err := loadBranches(ctx, s.st)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]int64, len(ids))
	for _, id := range ids {
		if v, err := newView(s.st, branches, id); err == nil {
			out[id] = v.chain
		}
	}
	return out, nil
}
