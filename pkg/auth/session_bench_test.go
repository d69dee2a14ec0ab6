package auth

import (
	"context"
	"testing"
	"time"
)

// BenchmarkVerifySessionRecord: the CPU a bearer check spends on the
// session record (Verify without the store: fakeAccounts), for a login's
// token with no record and for a renewed token in a record of
// MaxTokenSessions sessions.
func BenchmarkVerifySessionRecord(b *testing.B) {
	tk, f := newTestTokensB(b)
	fresh, _ := tk.Issue(f.users[7])
	var renewed Token
	for range MaxTokenSessions {
		t0, _ := tk.Issue(f.users[7])
		p, err := tk.Verify(WithRenewal(context.Background()), t0.Token)
		if err != nil {
			b.Fatal(err)
		}
		if renewed, err = tk.Renew(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
	for name, tok := range map[string]Token{"login": fresh, "full-record": renewed} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tk.Verify(context.Background(), tok.Token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func newTestTokensB(b *testing.B) (*Tokens, *fakeAccounts) {
	f := &fakeAccounts{users: map[int64]Principal{7: {Name: "editor", UserID: 7, Credential: "c1", Read: []int64{4}}}}
	tk, err := NewTokens(testKey, TokenConfig{Lifetime: 15 * time.Minute}, f, nil)
	if err != nil {
		b.Fatal(err)
	}
	return tk, f
}
