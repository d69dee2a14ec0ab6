package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
)

func basic(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }

func TestAuthorize(t *testing.T) {
	b, err := NewBootstrap("admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name, header, actAs string
		wantErr             error
		wantUser            string
	}{
		{"no header", "", "", ErrNoCredentials, ""},
		{"bearer is not basic", "Bearer abc", "", ErrNoCredentials, ""},
		{"bad base64", "Basic !!!", "", ErrBadCredentials, ""},
		{"no colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin")), "", ErrBadCredentials, ""},
		{"wrong password", basic("admin", "nope"), "", ErrBadCredentials, ""},
		{"unknown user", basic("eve", "s3cret"), "", ErrBadCredentials, ""},
		{"ok", basic("admin", "s3cret"), "", nil, "admin"},
		{"lower-case scheme", "basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret")), "", nil, "admin"},
		{"internal caller acts as editor", basic("admin", "s3cret"), "editor", nil, "editor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Authorize(ctx, b, c.header, c.actAs)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err == nil && p.User() != c.wantUser {
				t.Fatalf("user = %q, want %q", p.User(), c.wantUser)
			}
		})
	}
}

type plainUser struct{}

func (plainUser) Authenticate(context.Context, string, string) (Principal, error) {
	return Principal{Name: "editor"}, nil
}

func TestActAsRefusedForNonInternalCallers(t *testing.T) {
	_, err := Authorize(context.Background(), plainUser{}, basic("editor", "x"), "admin")
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	p, err := Authorize(context.Background(), plainUser{}, basic("editor", "x"), "editor")
	if err != nil || p.User() != "editor" {
		t.Fatalf("acting as oneself: %v %v", p, err)
	}
}

func FuzzParseBasic(f *testing.F) {
	f.Add("Basic YWRtaW46YWRtaW4=")
	f.Add("basic Og==")
	f.Add("Basic")
	f.Fuzz(func(t *testing.T, h string) {
		u, _, err := ParseBasic(h)
		if err == nil && u == "" {
			t.Fatalf("accepted an empty user name from %q", h)
		}
	})
}
