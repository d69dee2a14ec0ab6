package content

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// TestAccountCredential: the account of a user carries its current rights
// and a Credential that changes with the password and with RevokeTokens
// (and only then), which is what revokes bearer tokens; unknown, deleted
// and non-user objects have no account.
func TestAccountCredential(t *testing.T) {
	backends(t, func(t *testing.T, _ *Service, st store.Store) {
		var changed atomic.Int64
		s := New(st, nil, WithUsersChanged(func() { changed.Add(1) }))
		a := branch(t, s, "A", BranchDefault)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("alice", "pw", vin(AttrUserReadBranches, 0, a))}))
		alice := ids[0]
		p, err := s.Account(ctxBG, alice)
		if err != nil || p.Name != "alice" || p.UserID != alice || fmt.Sprint(p.Read) != fmt.Sprint([]int64{a}) || p.Credential == "" {
			t.Fatalf("Account = %+v, %v", p, err)
		}
		viaLogin, err := s.Authenticate(ctxBG, "alice", "pw")
		if err != nil || viaLogin.Credential != p.Credential {
			t.Fatalf("the login's credential %q, the account's %q (%v)", viaLogin.Credential, p.Credential, err)
		}
		cred := p.Credential
		// A change of rights keeps the credential (tokens stay valid, with
		// the new rights).
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserWriteBranches, 0, a)}}}))(t)
		if p, _ = s.Account(ctxBG, alice); p.Credential != cred || len(p.Write) != 1 {
			t.Fatalf("after a grant: %+v, credential was %q", p, cred)
		}
		before := changed.Load()
		if err := s.RevokeTokens(ctxBG, alice); err != nil {
			t.Fatal(err)
		}
		if changed.Load() != before+1 {
			t.Fatal("RevokeTokens did not call the users-changed hook")
		}
		p, _ = s.Account(ctxBG, alice)
		if p.Credential == cred || p.Credential == "" {
			t.Fatalf("after RevokeTokens the credential is %q (was %q)", p.Credential, cred)
		}
		cred = p.Credential
		if err := s.RevokeTokens(ctxBG, alice); err != nil {
			t.Fatal(err)
		}
		if p, _ = s.Account(ctxBG, alice); p.Credential == cred {
			t.Fatal("a second RevokeTokens kept the credential")
		}
		cred = p.Credential
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserPassword, 0, "pw2")}}}))(t)
		if p, _ = s.Account(ctxBG, alice); p.Credential == cred || p.Credential == "" {
			t.Fatal("a password change kept the credential")
		}
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserPassword, 0, nil)}}}))(t)
		if p, err = s.Account(ctxBG, alice); err != nil || p.Credential != "" {
			t.Fatalf("without a password: %+v, %v (want no credential)", p, err)
		}
		// A user may not raise anybody's generation through the API.
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserTokenGeneration, 0, 0)}}})
		wantErr(t, err, ErrForbidden, "an editor writing the token generation")
		_, typ := makeModel(t, s)
		chk2(s.DeleteObjects(ctxBG, "4", adminCh, []string{fmt.Sprint(alice)}))(t)
		for _, id := range []int64{alice, typ[0], 999999} {
			if _, err := s.Account(ctxBG, id); !errors.Is(err, auth.ErrBadCredentials) {
				t.Errorf("Account(%d) = %v, want ErrBadCredentials", id, err)
			}
			if err := s.RevokeTokens(ctxBG, id); !errors.Is(err, auth.ErrBadCredentials) {
				t.Errorf("RevokeTokens(%d) = %v, want ErrBadCredentials", id, err)
			}
		}
	})
}

// TestTokenSessionRecord: UpdateTokenSessions hands update the account
// with its record and stores what update returns in the same transaction
// (nothing when update fails or asks for no write), without flushing the
// Basic cache; Account reads it back; RevokeTokens empties it; no client
// writes it (TestBearerTokens checks no read returns it).
func TestTokenSessionRecord(t *testing.T) {
	backends(t, func(t *testing.T, _ *Service, st store.Store) {
		var changed atomic.Int64
		s := New(st, nil, WithUsersChanged(func() { changed.Add(1) }))
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("bob", "pw")}))
		bob := ids[0]
		before := changed.Load()
		set := func(rec string, write bool, fail error) error {
			return s.UpdateTokenSessions(ctxBG, bob, func(p auth.Principal) (string, bool, error) {
				if p.UserID != bob || p.Credential == "" {
					t.Errorf("update got %+v", p)
				}
				return rec, write, fail
			})
		}
		if err := set("0102030405060708:1:10:20:5", true, nil); err != nil {
			t.Fatal(err)
		}
		if p, _ := s.Account(ctxBG, bob); p.TokenSessions != "0102030405060708:1:10:20:5" {
			t.Fatalf("record %q", p.TokenSessions)
		}
		boom := errors.New("boom")
		if err := set("other", true, boom); !errors.Is(err, boom) {
			t.Fatalf("a failing update: %v", err)
		}
		if err := set("other", false, nil); err != nil {
			t.Fatal(err)
		}
		if p, _ := s.Account(ctxBG, bob); p.TokenSessions != "0102030405060708:1:10:20:5" {
			t.Fatalf("after a failing and a no-write update the record is %q", p.TokenSessions)
		}
		if changed.Load() != before {
			t.Fatal("a session record write flushed the Basic cache")
		}
		if p, _ := s.Authenticate(ctxBG, "bob", "pw"); p.TokenSessions != "" {
			t.Fatalf("a Basic principal carries the record %q", p.TokenSessions)
		}
		_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: bob, Values: []ValueInput{vin(AttrUserTokenSessions, 0, "x")}}})
		wantErr(t, err, ErrForbidden, "an editor writing the session record")
		if err := s.RevokeTokens(ctxBG, bob); err != nil {
			t.Fatal(err)
		}
		if p, _ := s.Account(ctxBG, bob); p.TokenSessions != "" {
			t.Fatalf("after RevokeTokens the record is %q", p.TokenSessions)
		}
		if err := s.UpdateTokenSessions(ctxBG, 999999, func(auth.Principal) (string, bool, error) { return "", true, nil }); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("an unknown user: %v", err)
		}
	})
}

func TestPlainJSONString(t *testing.T) {
	for in, want := range map[string]string{`"ab:1 cd"`: "ab:1 cd", `"a\"b"`: `a"b`, `"a\u0041"`: "aA", `""`: "", `null`: "", `7`: ""} {
		if got := plainJSONString([]byte(in)); got != want {
			t.Errorf("plainJSONString(%s) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkAccountSessionRecord: the store read of a bearer check
// (Account on SQLite) with no session record and with a record of
// auth.MaxTokenSessions sessions (about 3.5 KB).
func BenchmarkAccountSessionRecord(b *testing.B) {
	st, err := sqlite.Open(ctxBG, filepath.Join(b.TempDir(), "cms.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := Bootstrap(ctxBG, st); err != nil {
		b.Fatal(err)
	}
	s := New(st, nil)
	_, ids, err := s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("bob", "pw")})
	if err != nil {
		b.Fatal(err)
	}
	bob := ids[0]
	entry := "0102030405060708:12:1800000000:1800000900:1799990000"
	full := strings.TrimSpace(strings.Repeat(entry+" ", auth.MaxTokenSessions))
	for _, c := range []struct{ name, record string }{{"no-record", ""}, {"full-record", full}} {
		if err := s.UpdateTokenSessions(ctxBG, bob, func(auth.Principal) (string, bool, error) { return c.record, true, nil }); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if p, err := s.Account(ctxBG, bob); err != nil || p.TokenSessions != c.record {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
