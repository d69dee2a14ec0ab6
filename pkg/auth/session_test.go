package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func newClock() *clock                 { return &clock{t: time.Unix(1_800_000_000, 0)} }
func editor(f *fakeAccounts) Principal { f.mu.Lock(); defer f.mu.Unlock(); return f.users[7] }
func verifyRenewal(tk *Tokens, s string) (Principal, error) {
	return tk.Verify(WithRenewal(context.Background()), s)
}

// renew authenticates tok as a renewal and renews it.
func renew(t *testing.T, tk *Tokens, tok string) (Token, error) {
	t.Helper()
	p, err := verifyRenewal(tk, tok)
	if err != nil {
		return Token{}, err
	}
	return tk.Renew(context.Background(), p)
}

// TestRenewalSupersedes: a renewal answers the successor and the renewed
// token is refused at once for every request; a repeated renewal of it
// within the grace answers the very same successor without a write, after
// the grace it is refused; the successor renews in turn.
func TestRenewalSupersedes(t *testing.T) {
	c := newClock()
	tk, f := newTestTokens(t, c.now)
	ctx := context.Background()
	t0, err := tk.Issue(editor(f))
	if err != nil {
		t.Fatal(err)
	}
	c.add(time.Minute)
	t1, err := renew(t, tk, t0.Token)
	if err != nil {
		t.Fatal(err)
	}
	if t1.Token == t0.Token || !t1.ExpiresAt.Equal(c.now().Add(15*time.Minute)) {
		t.Fatalf("renewed %+v from %+v", t1, t0)
	}
	if _, err := tk.Verify(ctx, t0.Token); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("the renewed token: err = %v, want ErrSuperseded", err)
	}
	if p, err := tk.Verify(ctx, t1.Token); err != nil || p.Session.Renewal != 1 {
		t.Fatalf("the successor: %+v, %v", p.Session, err)
	}
	// Another tab renews the same token a little later: the same successor.
	writes := f.writes
	c.add(DefaultRenewGrace - time.Second)
	again, err := renew(t, tk, t0.Token)
	if err != nil || again != t1 {
		t.Fatalf("a repeated renewal within the grace = %+v, %v; want %+v", again, err, t1)
	}
	if f.writes != writes {
		t.Fatalf("a repeated renewal wrote the record")
	}
	c.add(time.Second)
	if _, err := renew(t, tk, t0.Token); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("a renewal after the grace: err = %v, want ErrSuperseded", err)
	}
	t2, err := renew(t, tk, t1.Token)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"first": t0.Token, "second": t1.Token} {
		if _, err := tk.Verify(ctx, s); !errors.Is(err, ErrSuperseded) {
			t.Errorf("the %s token after two renewals: err = %v", what, err)
		}
	}
	// Only the newest: a renewal of the first within the second's grace
	// is refused too (it is two renewals behind).
	if _, err := renew(t, tk, t0.Token); !errors.Is(err, ErrSuperseded) {
		t.Errorf("a token two renewals behind: err = %v", err)
	}
	if _, err := tk.Verify(ctx, t2.Token); err != nil {
		t.Fatal(err)
	}
	// Other sessions of the user are untouched.
	other, _ := tk.Issue(editor(f))
	if _, err := tk.Verify(ctx, other.Token); err != nil {
		t.Fatalf("another session: %v", err)
	}
	// A logout ends all and empties the record.
	if err := f.RevokeTokens(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := renew(t, tk, t2.Token); !errors.Is(err, ErrBadToken) || editor(f).TokenSessions != "" {
		t.Fatalf("after logout: %v, record %q", err, editor(f).TokenSessions)
	}
	st := tk.Stats()
	if st.Issued != 2 || st.Renewed != 3 || st.Superseded < 5 || st.Refused != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestConcurrentRenewals: two tabs renew one token at once; both get the
// same successor, one write.
func TestConcurrentRenewals(t *testing.T) {
	tk, f := newTestTokens(t, nil)
	t0, _ := tk.Issue(editor(f))
	var wg sync.WaitGroup
	got := make([]Token, 8)
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = renew(t, tk, t0.Token) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("renewal %d = %+v, %v; the first %+v", i, got[i], errs[i], got[0])
		}
	}
	if f.writes != 1 {
		t.Fatalf("%d writes, want 1", f.writes)
	}
}

// TestSessionMaxAge: renewals keep the login's time; a renewed token
// expires at the session's end at the latest; a renewal after the maximum
// age is ErrSessionExpired; and a token whose session is older than the
// maximum age is refused even before it expires (a server configured with a
// shorter maximum age).
func TestSessionMaxAge(t *testing.T) {
	c := newClock()
	f := &fakeAccounts{users: map[int64]Principal{7: {Name: "editor", UserID: 7, Credential: "c1"}}}
	tk, err := NewTokens(testKey, TokenConfig{Lifetime: 10 * time.Minute, SessionMaxAge: time.Hour}, f, c.now)
	if err != nil {
		t.Fatal(err)
	}
	login := c.now()
	tok, _ := tk.Issue(editor(f))
	for range 5 { // renew every 9 minutes up to 45 minutes
		c.add(9 * time.Minute)
		if tok, err = renew(t, tk, tok.Token); err != nil {
			t.Fatal(err)
		}
	}
	c.add(9 * time.Minute) // 54 minutes: the successor ends with the session
	if tok, err = renew(t, tk, tok.Token); err != nil || !tok.ExpiresAt.Equal(login.Add(time.Hour)) {
		t.Fatalf("renewed at 54m: %+v, %v; want expiry %s", tok, err, login.Add(time.Hour))
	}
	p, err := tk.Verify(context.Background(), tok.Token)
	if err != nil || p.Session.Start != login.Unix() || p.Session.Renewal != 6 {
		t.Fatalf("session %+v, %v", p.Session, err)
	}
	c.add(6*time.Minute - time.Second)
	if _, err := tk.Verify(context.Background(), tok.Token); err != nil {
		t.Fatalf("a second before the session's end: %v", err)
	}
	c.add(time.Second)
	if _, err := tk.Verify(context.Background(), tok.Token); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("at the session's end: err = %v, want ErrSessionExpired", err)
	}
	if _, err := renew(t, tk, tok.Token); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("renewing at the session's end: err = %v, want ErrSessionExpired", err)
	}
	if msg := TokenRefusal(ErrSessionExpired); !strings.Contains(msg, "session expired") || !strings.Contains(msg, "log in again") {
		t.Fatalf("the refusal says %q", msg)
	}
	// Renew calls the accounts after the check: a session expiring between
	// the check and the write is refused too.
	c.add(-time.Second)
	pv, err := verifyRenewal(tk, tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	c.add(time.Second)
	if _, err := tk.Renew(context.Background(), pv); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("expiring before the write: err = %v", err)
	}

	// A token not expired, of a session older than a shorter maximum age.
	long, _ := NewTokens(testKey, TokenConfig{Lifetime: 2 * time.Hour, SessionMaxAge: 12 * time.Hour}, f, c.now)
	short, _ := NewTokens(testKey, TokenConfig{Lifetime: time.Hour, SessionMaxAge: time.Hour}, f, c.now)
	lt, _ := long.Issue(editor(f))
	c.add(time.Hour + time.Second)
	if _, err := long.Verify(context.Background(), lt.Token); err != nil {
		t.Fatalf("under its own maximum age: %v", err)
	}
	if _, err := short.Verify(context.Background(), lt.Token); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("a session older than the maximum age, token not expired: err = %v", err)
	}
	if s := short.Stats(); s.SessionExpired != 1 || s.Expired != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestSessionRecordBounded: the record keeps at most MaxTokenSessions
// renewed sessions. Ended sessions are pruned; beyond the bound the least
// recently renewed session whose first token expired is dropped (its
// token refused); when every session is younger, the renewal is refused.
func TestSessionRecordBounded(t *testing.T) {
	c := newClock()
	tk, f := newTestTokens(t, c.now)
	var toks []Token
	for range MaxTokenSessions {
		tok, _ := tk.Issue(editor(f))
		r, err := renew(t, tk, tok.Token)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, r)
		c.add(time.Second)
	}
	if n := len(strings.Fields(editor(f).TokenSessions)); n != MaxTokenSessions {
		t.Fatalf("%d entries", n)
	}
	young, _ := tk.Issue(editor(f))
	if _, err := renew(t, tk, young.Token); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("a 65th session while all are young: err = %v", err)
	}
	// Every session renews again; once their first tokens expired, the
	// least recently renewed session is dropped for a new one.
	c.add(10 * time.Minute)
	for i := range toks {
		r, err := renew(t, tk, toks[i].Token)
		if err != nil {
			t.Fatal(err)
		}
		toks[i] = r
		c.add(time.Second)
	}
	c.add(7 * time.Minute)
	late, _ := tk.Issue(editor(f))
	if _, err := renew(t, tk, late.Token); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(editor(f).TokenSessions)); n != MaxTokenSessions {
		t.Fatalf("%d entries after an eviction", n)
	}
	if _, err := tk.Verify(context.Background(), toks[0].Token); !errors.Is(err, ErrBadToken) {
		t.Fatalf("the dropped session: err = %v", err)
	}
	if _, err := tk.Verify(context.Background(), toks[1].Token); err != nil {
		t.Fatalf("the next session: %v", err)
	}
	// After every token expired, one renewal prunes the record.
	c.add(20 * time.Minute)
	last, _ := tk.Issue(editor(f))
	if _, err := renew(t, tk, last.Token); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(editor(f).TokenSessions)); n != 1 {
		t.Fatalf("%d entries after pruning, want 1", n)
	}
}

// TestSessionRecordParsing: malformed records never make a renewed token
// acceptable, and an entry is found only as a whole.
func TestSessionRecordParsing(t *testing.T) {
	id := [sessionIDBytes]byte{1, 2, 3, 4, 5, 6, 7, 8}
	e := sessionEntry{id: id, renewal: 3, issued: 10, expires: 20, start: 5}
	for what, rec := range map[string]string{
		"empty": "", "garbage": "x:y", "negative": "0102030405060708:-1:10:20:5", "zero renewal": "0102030405060708:0:10:20:5",
		"suffix of another id": "ff0102030405060708:3:10:20:5", "short": "0102030405060708:3:10:20",
	} {
		if _, ok := findSession(rec, id); ok {
			t.Errorf("%s: found", what)
		}
	}
	rec := formatSessions([]sessionEntry{{id: [sessionIDBytes]byte{9}, renewal: 1, issued: 1, expires: 2, start: 1}, e})
	if got, ok := findSession(rec, id); !ok || got != e {
		t.Fatalf("findSession(%q) = %+v, %v", rec, got, ok)
	}
	if got := parseSessions(rec + " junk"); len(got) != 2 || got[1] != e {
		t.Fatalf("parseSessions = %+v", got)
	}
}
