// Package auth authenticates and authorises API callers. NovaDB clients
// send HTTP Basic credentials; browser clients may trade them for a
// short-lived bearer token (token.go). Users are objects of the system type User
// (pkg/content implements Authenticator over them); Bootstrap serves
// processes without a store, where the only user is the administrator
// configured at start-up (CMS_ADMIN_USER / CMS_ADMIN_PASSWORD).
//
// # Permissions
//
// A Principal carries its rights as loaded at authentication time: Admin
// may do everything; Internal may act for another user (X-CmsApi-Username);
// Read and Write list the branches granted. A grant on a branch covers that
// branch and every branch below it (its descendants in the branch tree), and
// Write implies Read. Allowed takes the chain of the branch addressed (the
// branch first, its parent, … up to the default branch 4), so the check is
// "is any branch of the chain granted". When an internal caller acts for
// another user, the caller's own rights apply; the named user is only
// recorded as the author of the write.
//
// Rights are cached with the authentication (Cached, one minute): a change
// takes effect at the latest after the TTL, and at once in the process that
// made it when it calls Cached.Flush.
package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Errors returned by the authenticator.
var (
	// ErrNoCredentials means the request carried no usable Authorization header.
	ErrNoCredentials = errors.New("auth: no credentials")
	// ErrBadCredentials means the user is unknown or the password is wrong.
	ErrBadCredentials = errors.New("auth: invalid user name or password")
	// ErrForbidden means the caller is known but lacks the permission.
	ErrForbidden = errors.New("auth: permission denied")
)

// Principal is an authenticated caller.
type Principal struct {
	// Name is the user name the caller authenticated as.
	Name string
	// Admin may do everything.
	Admin bool
	// Internal callers (other services of this platform, import tools) may
	// act for another user with the X-CmsApi-Username header.
	Internal bool
	// ActingAs is the user named by X-CmsApi-Username when honoured; writes
	// are recorded under it. Empty when the caller acts as itself.
	ActingAs string
	// Read and Write are the ids of the branches granted for reading and
	// writing (each with its descendants; Write implies Read).
	Read, Write []int64
	// UserID is the id of the caller's own user object (0 when it has
	// none, e.g. the configured bootstrap administrator without a store).
	UserID int64
	// Credential digests the user's stored credentials (password hash and
	// token generation, pkg/content): it changes with either, which
	// revokes the user's bearer tokens (token.go). Empty without a user
	// object. Never sent to clients.
	Credential string
	// Session is the session of the bearer token that authenticated the
	// call (token.go, session.go); zero for Basic credentials.
	Session TokenSession
	// TokenSessions is the user's stored session record, as
	// Accounts.Account and UpdateTokenSessions read it for pkg/auth; empty
	// in every principal a call carries.
	TokenSessions string
}

// ReadsUser reports whether p may read the user object id (login name,
// flags, grants): administrators read every user, others only their own.
// Everybody may look display names up (Identity_GetUserDisplayName).
func (p Principal) ReadsUser(id int64) bool {
	return p.Admin || (p.UserID != 0 && p.UserID == id)
}

// Access is what an operation does to a branch.
type Access int

// Access modes.
const (
	// AccessRead reads objects or the branch object.
	AccessRead Access = iota
	// AccessWrite creates, changes or deletes.
	AccessWrite
)

func (a Access) String() string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// Allowed reports whether p may access a branch whose chain (the branch
// first, then its ancestors up to the default branch) is given. An empty
// chain is allowed for admins only.
func (p Principal) Allowed(a Access, chain []int64) bool {
	if p.Admin {
		return true
	}
	for _, b := range chain {
		if slices.Contains(p.Write, b) || (a == AccessRead && slices.Contains(p.Read, b)) {
			return true
		}
	}
	return false
}

// User returns the name writes are recorded under.
func (p Principal) User() string {
	if p.ActingAs != "" {
		return p.ActingAs
	}
	return p.Name
}

// Authenticator checks credentials.
type Authenticator interface {
	Authenticate(ctx context.Context, user, password string) (Principal, error)
}

// Bootstrap authenticates the configured administrator only.
type Bootstrap struct {
	user string
	hash []byte
}

// NewBootstrap returns an authenticator for one administrator; the password
// is kept only as a bcrypt hash.
func NewBootstrap(user, password string) (*Bootstrap, error) {
	if user == "" || password == "" {
		return nil, errors.New("auth: the bootstrap administrator needs a user name and a password")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost+4)
	if err != nil {
		return nil, err
	}
	return &Bootstrap{user: user, hash: hash}, nil
}

// Authenticate implements Authenticator.
func (b *Bootstrap) Authenticate(_ context.Context, user, password string) (Principal, error) {
	nameOK := subtle.ConstantTimeCompare([]byte(user), []byte(b.user)) == 1
	// Always run bcrypt so timing does not reveal whether the user exists.
	pwErr := bcrypt.CompareHashAndPassword(b.hash, []byte(password))
	if !nameOK || pwErr != nil {
		return Principal{}, ErrBadCredentials
	}
	return Principal{Name: b.user, Admin: true, Internal: true}, nil
}

// ParseBasic parses an Authorization header value of the Basic scheme.
func ParseBasic(header string) (user, password string, err error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return "", "", ErrNoCredentials
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", ErrBadCredentials
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return "", "", ErrBadCredentials
	}
	return user, password, nil
}

// ParseBearer returns the token of an Authorization header value of the
// Bearer scheme; ok is false for any other scheme.
func ParseBearer(header string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// Authorize resolves the effective principal of a request: it authenticates
// the Basic credentials, or the bearer token when a implements
// TokenVerifier (else a token is ErrBadToken), and honours actAs
// (X-CmsApi-Username) only for internal callers; anyone else naming another
// user is refused.
func Authorize(ctx context.Context, a Authenticator, authorization, actAs string) (Principal, error) {
	if authorization == "" {
		return Principal{}, ErrNoCredentials
	}
	var p Principal
	var err error
	if token, ok := ParseBearer(authorization); ok {
		v, can := a.(TokenVerifier)
		if !can {
			return Principal{}, ErrBadToken
		}
		p, err = v.VerifyToken(ctx, token)
	} else {
		var user, password string
		if user, password, err = ParseBasic(authorization); err != nil {
			return Principal{}, err
		}
		p, err = a.Authenticate(ctx, user, password)
	}
	if err != nil {
		return Principal{}, err
	}
	if actAs = strings.TrimSpace(actAs); actAs != "" && actAs != p.Name {
		if !p.Internal {
			return Principal{}, ErrForbidden
		}
		p.ActingAs = actAs
	}
	return p, nil
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the call, if authenticated.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// UserName is the name of the call's principal ("" when unauthenticated).
func UserName(ctx context.Context) string {
	p, _ := FromContext(ctx)
	return p.Name
}

// CanRead returns the read check of p over the given branch chains
// (branch id → chain, e.g. every live branch): a branch without a chain is
// readable by administrators only. It is the one filter for lists that
// span branches (branch lists, comments, work items).
func (p Principal) CanRead(chains map[int64][]int64) func(branch int64) bool {
	return func(branch int64) bool {
		chain, ok := chains[branch]
		return p.Admin || (ok && p.Allowed(AccessRead, chain))
	}
}

// ReadableBranches returns the branches of chains p may read, ascending.
func (p Principal) ReadableBranches(chains map[int64][]int64) []int64 {
	can := p.CanRead(chains)
	out := make([]int64, 0, len(chains))
	for b := range chains {
		if can(b) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}
