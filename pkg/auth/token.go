package auth

// # Bearer tokens
//
// A bearer token is a short-lived credential a client (the browser studio)
// obtains once with its password (Login.IssueToken, POST
// /apis/cms/v1/auth/token) and then sends as "Authorization: Bearer …"
// instead of the password. It is
//
//	"cms1." base64url(payload) "." base64url(HMAC-SHA256(key, "token" ‖ payload))
//
// with a fixed 48-byte payload: the user object's id, the issue and expiry
// times (Unix seconds), 8 random bytes (no two tokens are equal) and a
// credential stamp, HMAC-SHA256(key, "stamp" ‖
// Principal.Credential) cut to 16 bytes. Principal.Credential digests the
// user's stored password hash and token generation (pkg/content), so a
// password change or a logout (which raises the generation) changes it and
// every token issued before no longer matches, in every process: Verify
// reads the user's account from the store on each call (one indexed read,
// no password hash computed) instead of trusting a cache. The same account
// read gives the caller's current rights, so a changed grant applies to the
// next request.
//
// The key is the server's (setting authTokenKey, at least 32 bytes); all
// processes of an installation share it. Comparisons of MACs and stamps are
// constant-time (hmac.Equal). Tokens carry no secret and are not
// encrypted: the payload is readable, not forgeable.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token errors.
var (
	// ErrBadToken means a bearer token is malformed, forged, expired or
	// revoked. It is an ErrBadCredentials.
	ErrBadToken = fmt.Errorf("%w: invalid, expired or revoked bearer token", ErrBadCredentials)
	// ErrTokensOff means the server has no token key: bearer tokens are
	// neither issued nor accepted.
	ErrTokensOff = errors.New("auth: bearer tokens are not configured on this server (authTokenKey)")
	// ErrNoTokenUser means the principal has no user object (the
	// bootstrap administrator of a process without a store) and cannot
	// hold a token.
	ErrNoTokenUser = errors.New("auth: this caller has no user object and cannot hold a bearer token")
)

// Token limits and defaults.
const (
	// MinTokenKeyBytes is the shortest token key accepted.
	MinTokenKeyBytes = 32
	// MaxTokenBytes bounds a bearer token: a longer one is refused
	// without being decoded. Issued tokens are 114 bytes.
	MaxTokenBytes = 256
	// DefaultTokenLifetime is a token's lifetime unless configured.
	DefaultTokenLifetime = 15 * time.Minute
	// MaxTokenLifetime bounds the configured lifetime.
	MaxTokenLifetime = 24 * time.Hour

	tokenPrefix  = "cms1."
	payloadBytes = 8 + 8 + 8 + nonceBytes + stampBytes
	nonceBytes   = 8
	stampBytes   = 16
	// issueSkew tolerates clocks of processes that differ a little: a
	// token issued up to this far in the future is accepted.
	issueSkew = time.Minute
)

// Accounts reads and revokes the credentials of user objects
// (pkg/content.Service implements it).
type Accounts interface {
	// Account returns the current principal of the live user object id,
	// with its Credential; ErrBadCredentials when there is none.
	Account(ctx context.Context, id int64) (Principal, error)
	// RevokeTokens raises the token generation of user id, which changes
	// its Credential.
	RevokeTokens(ctx context.Context, id int64) error
}

// Token is an issued bearer token.
type Token struct {
	Token     string
	ExpiresAt time.Time
}

// Tokens issues and verifies bearer tokens under one key.
type Tokens struct {
	key      []byte
	lifetime time.Duration
	accounts Accounts
	now      func() time.Time
}

// NewTokens returns the token issuer of key (at least MinTokenKeyBytes)
// with tokens living lifetime (DefaultTokenLifetime when 0). now is the
// clock (time.Now when nil).
func NewTokens(key []byte, lifetime time.Duration, accounts Accounts, now func() time.Time) (*Tokens, error) {
	if len(key) < MinTokenKeyBytes {
		return nil, fmt.Errorf("auth: the token key has %d bytes, want at least %d", len(key), MinTokenKeyBytes)
	}
	if lifetime == 0 {
		lifetime = DefaultTokenLifetime
	}
	if lifetime < time.Second || lifetime > MaxTokenLifetime {
		return nil, fmt.Errorf("auth: token lifetime %s: want 1s to %s", lifetime, MaxTokenLifetime)
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{key: append([]byte(nil), key...), lifetime: lifetime, accounts: accounts, now: now}, nil
}

// mac is HMAC-SHA256 under the key of a domain-separated message.
func (t *Tokens) mac(domain string, msg []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)
}

// Issue returns a fresh token of p (a principal of a user object with a
// Credential), valid for the lifetime from now.
func (t *Tokens) Issue(p Principal) (Token, error) {
	if p.UserID <= 0 || p.Credential == "" {
		return Token{}, ErrNoTokenUser
	}
	now := t.now()
	exp := now.Add(t.lifetime)
	payload := make([]byte, 0, payloadBytes)
	payload = binary.BigEndian.AppendUint64(payload, uint64(p.UserID))
	payload = binary.BigEndian.AppendUint64(payload, uint64(now.Unix()))
	payload = binary.BigEndian.AppendUint64(payload, uint64(exp.Unix()))
	nonce := make([]byte, nonceBytes)
	_, _ = rand.Read(nonce) // crypto/rand never fails on supported platforms
	payload = append(payload, nonce...)
	payload = append(payload, t.mac("stamp", []byte(p.Credential))[:stampBytes]...)
	enc := base64.RawURLEncoding
	tok := tokenPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(t.mac("token", payload))
	return Token{Token: tok, ExpiresAt: time.Unix(exp.Unix(), 0).UTC()}, nil
}

// Verify checks tok and returns the current principal of its user:
// ErrBadToken when it is malformed, forged, expired, or its user's
// credentials changed since it was issued (password, logout) or the user
// is gone; store errors as they are.
func (t *Tokens) Verify(ctx context.Context, tok string) (Principal, error) {
	uid, stamp, err := t.parse(tok)
	if err != nil {
		return Principal{}, err
	}
	p, err := t.accounts.Account(ctx, uid)
	if errors.Is(err, ErrBadCredentials) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, err
	}
	if p.Credential == "" || !hmac.Equal(stamp, t.mac("stamp", []byte(p.Credential))[:stampBytes]) {
		return Principal{}, ErrBadToken
	}
	return p, nil
}

// parse checks the form, MAC and times of tok and returns its user id and
// credential stamp.
func (t *Tokens) parse(tok string) (int64, []byte, error) {
	if len(tok) > MaxTokenBytes || !strings.HasPrefix(tok, tokenPrefix) {
		return 0, nil, ErrBadToken
	}
	body, sig, ok := strings.Cut(tok[len(tokenPrefix):], ".")
	if !ok {
		return 0, nil, ErrBadToken
	}
	enc := base64.RawURLEncoding.Strict()
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || len(payload) != payloadBytes || !hmac.Equal(mac, t.mac("token", payload)) {
		return 0, nil, ErrBadToken
	}
	uid := int64(binary.BigEndian.Uint64(payload[0:8]))       //nolint:gosec // written from a positive int64
	issued := int64(binary.BigEndian.Uint64(payload[8:16]))   //nolint:gosec // Unix seconds
	expires := int64(binary.BigEndian.Uint64(payload[16:24])) //nolint:gosec // Unix seconds
	now := t.now()
	if uid <= 0 || !now.Before(time.Unix(expires, 0)) || time.Unix(issued, 0).After(now.Add(issueSkew)) {
		return 0, nil, ErrBadToken
	}
	return uid, payload[24+nonceBytes:], nil
}

// TokenVerifier is an Authenticator that also accepts bearer tokens
// (Authorize asks it for "Authorization: Bearer").
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (Principal, error)
}

// Login is a process's authenticator: Basic credentials through the cache
// (and, on a miss, the guard), bearer tokens through Tokens, and token
// logins through the guard directly. Its Flush forgets cached Basic
// credentials; tokens need no flush (their check reads the store).
type Login struct {
	*Cached
	// guard checks passwords without the cache: a token login always
	// checks the password (throttled like Basic), so credentials cached
	// before a password change in another process cannot mint a token.
	guard  Authenticator
	tokens *Tokens // nil: tokens off
	// accounts revokes on logout.
	accounts Accounts
}

// NewLogin returns the authenticator of a process: cached over guard for
// Basic, tokens (nil: off) for Bearer.
func NewLogin(cached *Cached, guard Authenticator, tokens *Tokens) *Login {
	l := &Login{Cached: cached, guard: guard, tokens: tokens}
	if tokens != nil {
		l.accounts = tokens.accounts
	}
	return l
}

// VerifyToken implements TokenVerifier.
func (l *Login) VerifyToken(ctx context.Context, token string) (Principal, error) {
	if l.tokens == nil {
		return Principal{}, ErrBadToken
	}
	return l.tokens.Verify(ctx, token)
}

// IssueToken checks user and password like Basic credentials (throttled
// by the guard: a *RetryError when locked or saturated) and returns a new
// token.
func (l *Login) IssueToken(ctx context.Context, user, password string) (Token, error) {
	if l.tokens == nil {
		return Token{}, ErrTokensOff
	}
	if user == "" {
		return Token{}, ErrNoCredentials
	}
	p, err := l.guard.Authenticate(ctx, user, password)
	if err != nil {
		return Token{}, err
	}
	return l.tokens.Issue(p)
}

// RenewToken returns a new token for p, the principal of the call (from a
// still valid token: its Credential is the stored one, read by Verify).
func (l *Login) RenewToken(p Principal) (Token, error) {
	if l.tokens == nil {
		return Token{}, ErrTokensOff
	}
	return l.tokens.Issue(p)
}

// Logout revokes every token of p's user, in every process.
func (l *Login) Logout(ctx context.Context, p Principal) error {
	if l.tokens == nil {
		return ErrTokensOff
	}
	if p.UserID <= 0 {
		return ErrNoTokenUser
	}
	return l.accounts.RevokeTokens(ctx, p.UserID)
}
