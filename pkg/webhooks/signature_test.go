package webhooks

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignatureVerify(t *testing.T) {
	secret, body := []byte("k3y"), []byte(`{"kind":"created","objectIds":[1]}`)
	at := time.Unix(1_800_000_000, 0)
	h := Sign(secret, at, body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	if err := Verify(secret, h, body, at.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("valid signature: %v", err)
	}
	// Rotation: a second signature of another key is accepted beside.
	other := Sign([]byte("old"), at, body)
	if err := Verify(secret, other+","+h[strings.Index(h, "v1="):], body, at, 0); err != nil {
		t.Fatalf("two signatures: %v", err)
	}
	for name, c := range map[string]struct {
		secret, body []byte
		header       string
		now          time.Time
		want         error
	}{
		"other body":      {secret, []byte(`{"kind":"deleted"}`), h, at, ErrSignatureMismatch},
		"other secret":    {[]byte("k3z"), body, h, at, ErrSignatureMismatch},
		"other timestamp": {secret, body, strings.Replace(h, "t=1800000000", "t=1800000001", 1), at, ErrSignatureMismatch},
		"too old":         {secret, body, h, at.Add(6 * time.Minute), ErrSignatureExpired},
		"from the future": {secret, body, h, at.Add(-6 * time.Minute), ErrSignatureExpired},
		"no timestamp":    {secret, body, h[strings.Index(h, "v1="):], at, ErrSignatureMalformed},
		"no signature":    {secret, body, "t=1800000000", at, ErrSignatureMalformed},
		"short signature": {secret, body, "t=1800000000,v1=abcd", at, ErrSignatureMalformed},
		"two timestamps":  {secret, body, "t=1," + h, at, ErrSignatureMalformed},
		"garbage":         {secret, body, "hello", at, ErrSignatureMalformed},
		"huge":            {secret, body, h + strings.Repeat(",x=1", 300), at, ErrSignatureMalformed},
	} {
		if err := Verify(c.secret, c.header, c.body, c.now, 5*time.Minute); !errors.Is(err, c.want) {
			t.Errorf("%s: Verify = %v, want %v", name, err, c.want)
		}
	}
}

func FuzzVerify(f *testing.F) {
	secret, body := []byte("k"), []byte("{}")
	f.Add(Sign(secret, time.Unix(1, 0), body))
	f.Add("t=1,v1=zz")
	f.Add(",,,=")
	f.Fuzz(func(t *testing.T, header string) {
		err := Verify(secret, header, body, time.Unix(1, 0), time.Minute)
		if err == nil && header != Sign(secret, time.Unix(1, 0), body) {
			// Accepted headers must carry the right MAC: parse and re-check.
			ts, sigs, perr := parseSignature(header)
			if perr != nil || len(sigs) == 0 || ts == "" {
				t.Fatalf("accepted unparsable header %q", header)
			}
		}
	})
}
