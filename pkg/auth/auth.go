// Package auth authenticates API callers. NovaDB clients send HTTP Basic
// credentials; users are objects of the system type User (issue 4 stores
// them). Until the user store exists, the only user is the bootstrap
// administrator configured at start-up (CMS_ADMIN_PASSWORD).
package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
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

// Authorize resolves the effective principal of a request: it authenticates
// the Basic credentials and honours actAs (X-CmsApi-Username) only for
// internal callers; anyone else naming another user is refused.
func Authorize(ctx context.Context, a Authenticator, authorization, actAs string) (Principal, error) {
	if authorization == "" {
		return Principal{}, ErrNoCredentials
	}
	user, password, err := ParseBasic(authorization)
	if err != nil {
		return Principal{}, err
	}
	p, err := a.Authenticate(ctx, user, password)
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
