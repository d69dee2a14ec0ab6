package auth

// # Bearer tokens
//
// A bearer token is a short-lived credential a client (the browser studio)
// obtains once with its password (Login.IssueToken, POST
// /apis/cms/v1/auth/token) and then sends as "Authorization: Bearer …"
// instead of the password. It is
//
//	"cms2." base64url(payload) "." base64url(HMAC-SHA256(key, "token" ‖ payload))
//
// with a fixed 64-byte payload: the user object's id, the issue and expiry
// times (Unix seconds), the session (8 random bytes drawn at the login,
// the login's time and the number of renewals since, session.go) and a
// credential stamp, HMAC-SHA256(key, "stamp" ‖ Principal.Credential) cut
// to 16 bytes. Principal.Credential digests the user's stored password
// hash and token generation (pkg/content), so a password change or a
// logout (which raises the generation) changes it and every token issued
// before no longer matches, in every process: Verify reads the user's
// account from the store on each call (one indexed read, no password hash
// computed) instead of trusting a cache. The same read gives the caller's
// current rights, so a changed grant applies to the next request, and the
// user's session record (session.go), so a token superseded by a renewal
// is refused.
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
	"sync/atomic"
	"time"
)

// Token errors. Each refusal of a presented token is an ErrBadToken, and so
// an ErrBadCredentials (401).
var (
	// ErrBadToken means a bearer token is malformed, forged, expired or
	// revoked. It is an ErrBadCredentials.
	ErrBadToken = fmt.Errorf("%w: invalid, expired or revoked bearer token", ErrBadCredentials)
	// ErrTokenExpired means a genuine token is past its expiry. It is an
	// ErrBadToken.
	ErrTokenExpired = fmt.Errorf("%w (expired)", ErrBadToken)
	// ErrSessionExpired means a genuine token belongs to a session that
	// started (at the login) more than the session's maximum age ago: it
	// can no longer be used or renewed, the user must log in again. It is
	// an ErrBadToken.
	ErrSessionExpired = fmt.Errorf("%w: the session expired (authSessionMaxAge); log in again", ErrBadToken)
	// ErrSuperseded means a genuine token was renewed: its successor
	// replaced it (session.go). It is an ErrBadToken.
	ErrSuperseded = fmt.Errorf("%w (renewed: superseded by a newer token of its session)", ErrBadToken)
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
	// without being decoded. Issued tokens are 135 bytes.
	MaxTokenBytes = 256
	// DefaultTokenLifetime is a token's lifetime unless configured.
	DefaultTokenLifetime = 15 * time.Minute
	// MaxTokenLifetime bounds the configured lifetime.
	MaxTokenLifetime = 24 * time.Hour
	// DefaultSessionMaxAge is the default maximum age of a session: no
	// renewal extends it beyond this time after the login.
	DefaultSessionMaxAge = 12 * time.Hour
	// MinSessionMaxAge and MaxSessionMaxAge bound the configured maximum
	// age (which is also at least the token lifetime).
	MinSessionMaxAge = time.Minute
	MaxSessionMaxAge = 30 * 24 * time.Hour

	tokenPrefix  = "cms2."
	payloadBytes = 8 + 8 + 8 + sessionIDBytes + 8 + 8 + stampBytes
	stampOffset  = payloadBytes - stampBytes
	stampBytes   = 16
	// issueSkew tolerates clocks of processes that differ a little: a
	// token issued up to this far in the future is accepted.
	issueSkew = time.Minute
)

// Accounts reads and revokes the credentials of user objects and keeps
// their session records (pkg/content.Service implements it).
type Accounts interface {
	// Account returns the current principal of the live user object id,
	// with its Credential and TokenSessions; ErrBadCredentials when there
	// is none.
	Account(ctx context.Context, id int64) (Principal, error)
	// RevokeTokens raises the token generation of user id, which changes
	// its Credential, and empties its session record.
	RevokeTokens(ctx context.Context, id int64) error
	// UpdateTokenSessions calls update with the current principal of user
	// id (as Account returns it) inside one write transaction and, when
	// update asks to, stores the session record it returns, in the same
	// transaction: concurrent updates, in any process, see each other's
	// records. An error of update is returned as it is, nothing written.
	UpdateTokenSessions(ctx context.Context, id int64, update func(Principal) (record string, write bool, err error)) error
}

// Token is an issued bearer token.
type Token struct {
	Token     string
	ExpiresAt time.Time
}

// TokenConfig configures Tokens; zero fields take their defaults.
type TokenConfig struct {
	// Lifetime of a token (DefaultTokenLifetime), 1s to MaxTokenLifetime.
	Lifetime time.Duration
	// SessionMaxAge (DefaultSessionMaxAge), MinSessionMaxAge to
	// MaxSessionMaxAge and at least Lifetime: how long after the login a
	// session's tokens are accepted and renewed.
	SessionMaxAge time.Duration
	// RenewGrace (DefaultRenewGrace): how long after a renewal a renewal
	// of the token it replaced answers the same successor (session.go).
	RenewGrace time.Duration
}

// CheckTokenConfig reports what is wrong with the lifetime and maximum
// session age (after defaults), or nil.
func CheckTokenConfig(lifetime, maxAge time.Duration) error {
	var errs []error
	if lifetime < time.Second || lifetime > MaxTokenLifetime {
		errs = append(errs, fmt.Errorf("authTokenLifetime %s: want 1s to %s", lifetime, MaxTokenLifetime))
	}
	switch {
	case maxAge < MinSessionMaxAge || maxAge > MaxSessionMaxAge:
		errs = append(errs, fmt.Errorf("authSessionMaxAge %s: want %s to %s", maxAge, MinSessionMaxAge, MaxSessionMaxAge))
	case maxAge < lifetime:
		errs = append(errs, fmt.Errorf("authSessionMaxAge %s is shorter than authTokenLifetime %s: a session must outlive its first token", maxAge, lifetime))
	}
	return errors.Join(errs...)
}

// Tokens issues, verifies and renews bearer tokens under one key.
type Tokens struct {
	key      []byte
	lifetime time.Duration
	maxAge   time.Duration
	grace    time.Duration
	accounts Accounts
	now      func() time.Time
	stats    tokenCounters
}

// NewTokens returns the token issuer of key (at least MinTokenKeyBytes)
// configured by cfg. now is the clock (time.Now when nil).
func NewTokens(key []byte, cfg TokenConfig, accounts Accounts, now func() time.Time) (*Tokens, error) {
	if len(key) < MinTokenKeyBytes {
		return nil, fmt.Errorf("auth: the token key has %d bytes, want at least %d", len(key), MinTokenKeyBytes)
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultTokenLifetime
	}
	if cfg.SessionMaxAge == 0 {
		cfg.SessionMaxAge = max(DefaultSessionMaxAge, cfg.Lifetime)
	}
	if cfg.RenewGrace == 0 {
		cfg.RenewGrace = DefaultRenewGrace
	}
	if err := CheckTokenConfig(cfg.Lifetime, cfg.SessionMaxAge); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if cfg.RenewGrace < 0 || cfg.RenewGrace > MaxRenewGrace {
		return nil, fmt.Errorf("auth: renewal grace %s: want 0 to %s", cfg.RenewGrace, MaxRenewGrace)
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{key: append([]byte(nil), key...), lifetime: cfg.Lifetime, maxAge: cfg.SessionMaxAge, grace: cfg.RenewGrace,
		accounts: accounts, now: now}, nil
}

// TokenStats counts what happened to tokens in this process.
type TokenStats struct {
	// Issued by a login, Renewed by a renewal (a repeated renewal within
	// the grace included), Revoked: logouts (each revokes every token of
	// its user).
	Issued, Renewed, Revoked int64
	// Presented tokens refused: Expired (past expiresAt), SessionExpired
	// (the session is older than its maximum age), Superseded (replaced
	// by a renewal), Refused (malformed, forged, signed by another key,
	// revoked by a logout or password change, user gone).
	Expired, SessionExpired, Superseded, Refused int64
}

type tokenCounters struct {
	issued, renewed, revoked, expired, sessionExpired, superseded, refused atomic.Int64
}

// Stats returns the counters of t.
func (t *Tokens) Stats() TokenStats {
	s := &t.stats
	return TokenStats{Issued: s.issued.Load(), Renewed: s.renewed.Load(), Revoked: s.revoked.Load(),
		Expired: s.expired.Load(), SessionExpired: s.sessionExpired.Load(), Superseded: s.superseded.Load(), Refused: s.refused.Load()}
}

// refuse counts err, a refusal of a presented token, and returns it.
func (t *Tokens) refuse(err error) error {
	switch {
	case errors.Is(err, ErrSessionExpired):
		t.stats.sessionExpired.Add(1)
	case errors.Is(err, ErrTokenExpired):
		t.stats.expired.Add(1)
	case errors.Is(err, ErrSuperseded):
		t.stats.superseded.Add(1)
	case errors.Is(err, ErrBadToken):
		t.stats.refused.Add(1)
	}
	return err
}

// mac is HMAC-SHA256 under the key of a domain-separated message.
func (t *Tokens) mac(domain string, msg []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)
}

// claims are the contents of a token.
type claims struct {
	user            int64
	issued, expires int64 // Unix seconds
	session         TokenSession
	stamp           []byte
}

// Issue returns the first token of a new session of p (a principal of a
// user object with a Credential): a login.
func (t *Tokens) Issue(p Principal) (Token, error) {
	if p.UserID <= 0 || p.Credential == "" {
		return Token{}, ErrNoTokenUser
	}
	now := t.now().Unix()
	var sid [sessionIDBytes]byte
	_, _ = rand.Read(sid[:]) // crypto/rand never fails on supported platforms
	tok := t.sign(p, TokenSession{ID: sid, Start: now}, now, min(now+secs(t.lifetime), now+secs(t.maxAge)))
	t.stats.issued.Add(1)
	return tok, nil
}

func secs(d time.Duration) int64 { return int64(d / time.Second) }

// sign returns the token of p's session s issued at issued, expiring at
// expires (Unix seconds). It is deterministic: the same arguments give the
// same token.
func (t *Tokens) sign(p Principal, s TokenSession, issued, expires int64) Token {
	payload := make([]byte, 0, payloadBytes)
	payload = binary.BigEndian.AppendUint64(payload, uint64(p.UserID))
	payload = binary.BigEndian.AppendUint64(payload, uint64(issued))  //nolint:gosec // Unix seconds
	payload = binary.BigEndian.AppendUint64(payload, uint64(expires)) //nolint:gosec // Unix seconds
	payload = append(payload, s.ID[:]...)
	payload = binary.BigEndian.AppendUint64(payload, uint64(s.Start))   //nolint:gosec // Unix seconds
	payload = binary.BigEndian.AppendUint64(payload, uint64(s.Renewal)) //nolint:gosec // a non-negative count
	payload = append(payload, t.stamp(p.Credential)...)
	enc := base64.RawURLEncoding
	tok := tokenPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(t.mac("token", payload))
	return Token{Token: tok, ExpiresAt: time.Unix(expires, 0).UTC()}
}

func (t *Tokens) stamp(credential string) []byte {
	return t.mac("stamp", []byte(credential))[:stampBytes]
}

// Verify checks tok and returns the current principal of its user, with
// the token's Session: ErrBadToken when it is malformed, forged, expired
// (ErrTokenExpired), of a session older than the maximum age
// (ErrSessionExpired), superseded by a renewal (ErrSuperseded), or its
// user's credentials changed since it was issued (password, logout) or the
// user is gone; store errors as they are. In a context of WithRenewal, a
// token superseded less than the renewal grace ago is accepted
// (session.go).
func (t *Tokens) Verify(ctx context.Context, tok string) (Principal, error) {
	c, err := t.parse(tok)
	if err != nil {
		return Principal{}, t.refuse(err)
	}
	p, err := t.accounts.Account(ctx, c.user)
	if errors.Is(err, ErrBadCredentials) {
		return Principal{}, t.refuse(ErrBadToken)
	}
	if err != nil {
		return Principal{}, err
	}
	if p.Credential == "" || !hmac.Equal(c.stamp, t.stamp(p.Credential)) {
		return Principal{}, t.refuse(ErrBadToken)
	}
	if err := t.current(p.TokenSessions, c, renewal(ctx)); err != nil {
		return Principal{}, t.refuse(err)
	}
	p.TokenSessions = "" // the record stays with the accounts
	p.Session = c.session
	return p, nil
}

// parse checks the form, MAC and times of tok and returns its claims.
func (t *Tokens) parse(tok string) (claims, error) {
	if len(tok) > MaxTokenBytes || !strings.HasPrefix(tok, tokenPrefix) {
		return claims{}, ErrBadToken
	}
	body, sig, ok := strings.Cut(tok[len(tokenPrefix):], ".")
	if !ok {
		return claims{}, ErrBadToken
	}
	enc := base64.RawURLEncoding.Strict()
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || len(payload) != payloadBytes || !hmac.Equal(mac, t.mac("token", payload)) {
		return claims{}, ErrBadToken
	}
	u64 := func(at int) int64 { return int64(binary.BigEndian.Uint64(payload[at : at+8])) } //nolint:gosec // written from non-negative int64s
	c := claims{user: u64(0), issued: u64(8), expires: u64(16), stamp: payload[stampOffset:]}
	copy(c.session.ID[:], payload[24:24+sessionIDBytes])
	c.session.Start, c.session.Renewal = u64(24+sessionIDBytes), u64(32+sessionIDBytes)
	now := t.now()
	switch {
	case c.user <= 0 || c.session.Renewal < 0 || time.Unix(c.issued, 0).After(now.Add(issueSkew)) ||
		time.Unix(c.session.Start, 0).After(time.Unix(c.issued, 0)):
		return claims{}, ErrBadToken
	case !now.Before(time.Unix(c.session.Start, 0).Add(t.maxAge)):
		return claims{}, ErrSessionExpired
	case !now.Before(time.Unix(c.expires, 0)):
		return claims{}, ErrTokenExpired
	}
	return c, nil
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

// Tokens returns the token issuer (nil: tokens off).
func (l *Login) Tokens() *Tokens { return l.tokens }

// VerifyToken implements TokenVerifier.
func (l *Login) VerifyToken(ctx context.Context, token string) (Principal, error) {
	if l.tokens == nil {
		return Principal{}, ErrBadToken
	}
	return l.tokens.Verify(ctx, token)
}

// IssueToken checks user and password like Basic credentials (throttled
// by the guard: a *RetryError when locked or saturated) and returns the
// first token of a new session.
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

// RenewToken returns the successor of the token that authenticated p
// (Verify in a context of WithRenewal), which from then on is refused
// (session.go). A caller authenticated otherwise (Basic credentials)
// starts a new session.
func (l *Login) RenewToken(ctx context.Context, p Principal) (Token, error) {
	if l.tokens == nil {
		return Token{}, ErrTokensOff
	}
	if p.Session.Start == 0 {
		return l.tokens.Issue(p)
	}
	return l.tokens.Renew(ctx, p)
}

// Logout revokes every token of p's user, in every process.
func (l *Login) Logout(ctx context.Context, p Principal) error {
	if l.tokens == nil {
		return ErrTokensOff
	}
	if p.UserID <= 0 {
		return ErrNoTokenUser
	}
	if err := l.accounts.RevokeTokens(ctx, p.UserID); err != nil {
		return err
	}
	l.tokens.stats.revoked.Add(1)
	return nil
}

// Guard returns the password check without the cache, throttled like a
// login (a *RetryError when the name or address is locked): for checks
// that must see the stored password, e.g. the current one of a password
// change.
func (l *Login) Guard() Authenticator { return l.guard }
