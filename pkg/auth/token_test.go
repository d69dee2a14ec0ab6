package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAccounts is a user store of one map; RevokeTokens changes the
// Credential as pkg/content does (the generation is part of it) and empties
// the session record; UpdateTokenSessions is serialized like write
// transactions.
type fakeAccounts struct {
	mu     sync.Mutex
	users  map[int64]Principal
	reads  int
	writes int
}

func (f *fakeAccounts) UpdateTokenSessions(_ context.Context, id int64, update func(Principal) (string, bool, error)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.users[id]
	if !ok {
		return ErrBadCredentials
	}
	rec, write, err := update(p)
	if err != nil || !write {
		return err
	}
	f.writes++
	p.TokenSessions = rec
	f.users[id] = p
	return nil
}

func (f *fakeAccounts) Account(_ context.Context, id int64) (Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	p, ok := f.users[id]
	if !ok {
		return Principal{}, ErrBadCredentials
	}
	return p, nil
}

func (f *fakeAccounts) RevokeTokens(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.users[id]
	p.Credential += "+"
	p.TokenSessions = ""
	f.users[id] = p
	return nil
}

func (f *fakeAccounts) set(p Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[p.UserID] = p
}

// passwords authenticates the users of f by a fixed password each.
type passwords struct {
	f   *fakeAccounts
	pws map[string]string
}

func (a passwords) Authenticate(_ context.Context, user, password string) (Principal, error) {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	for _, p := range a.f.users {
		if p.Name == user && a.pws[user] == password {
			return p, nil
		}
	}
	return Principal{}, ErrBadCredentials
}

var testKey = []byte(strings.Repeat("k", MinTokenKeyBytes))

func newTestTokens(t *testing.T, now func() time.Time) (*Tokens, *fakeAccounts) {
	t.Helper()
	f := &fakeAccounts{users: map[int64]Principal{7: {Name: "editor", UserID: 7, Credential: "c1", Read: []int64{4}}}}
	tk, err := NewTokens(testKey, TokenConfig{Lifetime: 15 * time.Minute}, f, now)
	if err != nil {
		t.Fatal(err)
	}
	return tk, f
}

func TestTokenRoundTripAndCurrentRights(t *testing.T) {
	tk, f := newTestTokens(t, nil)
	tok, err := tk.Issue(Principal{Name: "editor", UserID: 7, Credential: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Token) > MaxTokenBytes || time.Until(tok.ExpiresAt) > 15*time.Minute || time.Until(tok.ExpiresAt) < 14*time.Minute {
		t.Fatalf("token %q expires %s", tok.Token, tok.ExpiresAt)
	}
	p, err := tk.Verify(context.Background(), tok.Token)
	if err != nil || p.Name != "editor" || len(p.Read) != 1 {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	// A changed grant applies to the next request: the account is read.
	f.set(Principal{Name: "editor", UserID: 7, Credential: "c1", Write: []int64{4}})
	if p, err = tk.Verify(context.Background(), tok.Token); err != nil || len(p.Write) != 1 {
		t.Fatalf("after a grant change Verify = %+v, %v", p, err)
	}
}

func TestTokenRefused(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	tk, f := newTestTokens(t, clock)
	tok, err := tk.Issue(Principal{Name: "editor", UserID: 7, Credential: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewTokens([]byte(strings.Repeat("o", MinTokenKeyBytes)), TokenConfig{Lifetime: time.Minute}, f, clock)
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.Issue(Principal{Name: "editor", UserID: 7, Credential: "c1"})
	body, sig, _ := strings.Cut(strings.TrimPrefix(tok.Token, tokenPrefix), ".")
	payload, _ := base64.RawURLEncoding.DecodeString(body)
	payload[7] = 8 // another user id, same MAC
	otherUser := tokenPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + sig
	flipped := []byte(tok.Token)
	flipped[len(flipped)-1] ^= 1
	for name, s := range map[string]string{
		"empty": "", "garbage": "abc", "jwt alg none": "eyJhbGciOiJub25lIn0.e30.", "prefix only": tokenPrefix,
		"no signature": tokenPrefix + body, "tampered signature": string(flipped), "tampered payload": otherUser,
		"signed by another key": foreign.Token, "too long": tok.Token + strings.Repeat("A", MaxTokenBytes),
		"padded base64": tokenPrefix + body + "=." + sig,
	} {
		if _, err := tk.Verify(context.Background(), s); !errors.Is(err, ErrBadToken) {
			t.Errorf("%s: err = %v, want ErrBadToken", name, err)
		}
	}
	if _, err := tk.Verify(context.Background(), tok.Token); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
	// Expired: valid until the expiry second, refused from it on.
	now = tok.ExpiresAt.Add(-time.Second)
	if _, err := tk.Verify(context.Background(), tok.Token); err != nil {
		t.Fatalf("one second before expiry: %v", err)
	}
	now = tok.ExpiresAt
	if _, err := tk.Verify(context.Background(), tok.Token); !errors.Is(err, ErrBadToken) {
		t.Fatalf("expired: err = %v", err)
	}
	now = time.Now()
	// Revoked (logout or password change) and deleted users.
	if err := f.RevokeTokens(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Verify(context.Background(), tok.Token); !errors.Is(err, ErrBadToken) {
		t.Fatalf("after a credential change: err = %v", err)
	}
	tok2, _ := tk.Issue(f.users[7])
	delete(f.users, 7)
	if _, err := tk.Verify(context.Background(), tok2.Token); !errors.Is(err, ErrBadToken) {
		t.Fatalf("deleted user: err = %v", err)
	}
	if _, err := tk.Issue(Principal{Name: "admin", Admin: true}); !errors.Is(err, ErrNoTokenUser) {
		t.Fatalf("principal without a user object: err = %v", err)
	}
}

func TestNewTokensLimits(t *testing.T) {
	if _, err := NewTokens([]byte("short"), TokenConfig{}, nil, nil); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	if _, err := NewTokens(testKey, TokenConfig{Lifetime: MaxTokenLifetime + time.Second}, nil, nil); err == nil {
		t.Fatal("a lifetime above the maximum was accepted")
	}
	for what, c := range map[string]TokenConfig{
		"a max age below 1m":              {SessionMaxAge: 59 * time.Second},
		"a max age above 30d":             {SessionMaxAge: MaxSessionMaxAge + time.Second},
		"a max age below the lifetime":    {Lifetime: 2 * time.Hour, SessionMaxAge: time.Hour},
		"a renewal grace above 5 minutes": {RenewGrace: MaxRenewGrace + time.Second},
	} {
		if _, err := NewTokens(testKey, c, nil, nil); err == nil {
			t.Errorf("%s was accepted", what)
		}
	}
	if err := CheckTokenConfig(time.Hour, 30*time.Minute); err == nil || !strings.Contains(err.Error(), "authSessionMaxAge 30m0s is shorter than authTokenLifetime 1h0m0s") {
		t.Errorf("max age below the lifetime: %v", err)
	}
}

func TestLoginTokensThrottledAndAuthorize(t *testing.T) {
	tk, f := newTestTokens(t, nil)
	guard := NewGuarded(passwords{f: f, pws: map[string]string{"editor": "pw"}}, GuardConfig{UserFailures: 2, Backoff: time.Hour}, nil)
	l := NewLogin(NewCached(guard, time.Minute, 1<<20), guard, tk)
	ctx := context.Background()
	tok, err := l.IssueToken(ctx, "editor", "pw")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Authorize(ctx, l, "Bearer "+tok.Token, "")
	if err != nil || p.Name != "editor" {
		t.Fatalf("Authorize(Bearer) = %+v, %v", p, err)
	}
	if _, err := Authorize(ctx, l, "bearer  "+tok.Token+" ", ""); err != nil {
		t.Fatalf("lower-case scheme: %v", err)
	}
	renewed, err := l.RenewToken(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Logout(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tok.Token, renewed.Token} {
		if _, err := Authorize(ctx, l, "Bearer "+s, ""); !errors.Is(err, ErrBadToken) {
			t.Fatalf("after logout: err = %v", err)
		}
	}
	// Wrong passwords lock the user name for token logins as for Basic.
	for range 2 {
		if _, err := l.IssueToken(ctx, "editor", "wrong"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password: err = %v", err)
		}
	}
	var retry *RetryError
	if _, err := l.IssueToken(ctx, "editor", "pw"); !errors.As(err, &retry) || !errors.Is(err, ErrThrottled) {
		t.Fatalf("after 2 failures: err = %v, want throttled", err)
	}
	off := NewLogin(NewCached(guard, time.Minute, 1<<20), guard, nil)
	if _, err := off.IssueToken(ctx, "editor", "pw"); !errors.Is(err, ErrTokensOff) {
		t.Fatalf("without a key: err = %v", err)
	}
	if _, err := Authorize(ctx, off, "Bearer "+tok.Token, ""); !errors.Is(err, ErrBadToken) {
		t.Fatalf("without a key, a token: err = %v", err)
	}
}
