package content

import (
	"errors"
	"strconv"
	"testing"
)

func FuzzParseIdent(f *testing.F) {
	for _, s := range []string{"0", "42", "-1", "2147483648", "branchDefault", " home ", "a1b2c3d4-0000-4000-8000-00000000000a",
		"{A1B2C3D4-0000-4000-8000-00000000000A}", "a1b2c3d4000040008000000000000000", "not valid", "", "a,b", "_x.y-z", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseIdent(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseIdent(%q) error %v is not ErrInvalid", s, err)
			}
			return
		}
		switch id.Kind {
		case IdentID:
			if id.ID < 0 || strconv.FormatInt(id.ID, 10) != strconv.FormatInt(mustAtoi(t, id.Raw), 10) {
				t.Fatalf("ParseIdent(%q) = %+v", s, id)
			}
		case IdentGUID:
			g, ok := normalizeGUID(id.GUID)
			if !ok || g != id.GUID || len(g) != 36 {
				t.Fatalf("GUID %q does not normalise to itself", id.GUID)
			}
		case IdentAPI:
			if checkAPIIdentifier(id.Raw) != nil {
				t.Fatalf("ApiIdentifier %q accepted by ParseIdent but not by checkAPIIdentifier", id.Raw)
			}
			if _, err := strconv.ParseInt(id.Raw, 10, 64); err == nil {
				t.Fatalf("numeric %q read as ApiIdentifier", id.Raw)
			}
		default:
			t.Fatalf("ParseIdent(%q) returned kind %d without error", s, id.Kind)
		}
		for _, p := range SplitIdents(s) {
			if p == "" {
				t.Fatal("SplitIdents returned an empty item")
			}
		}
	})
}

func mustAtoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func FuzzContinuationToken(f *testing.F) {
	f.Add("", int64(0), "typed/4/10/any")
	f.Add(encodeToken(12345, "typed/4/10/any"), int64(12345), "typed/4/10/any")
	f.Add("YzEuMS54", int64(1), "branches/4/40/any")
	f.Add("!!", int64(-5), "")
	f.Fuzz(func(t *testing.T, tok string, after int64, scope string) {
		if got, err := decodeToken(tok, scope); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("decodeToken(%q) error %v is not ErrInvalid", tok, err)
			}
		} else if got < 0 {
			t.Fatalf("decodeToken(%q) = %d", tok, got)
		}
		if after < 0 {
			return
		}
		enc := encodeToken(after, scope)
		got, err := decodeToken(enc, scope)
		if err != nil || got != after {
			t.Fatalf("round trip of %d in %q: %d, %v", after, scope, got, err)
		}
		if _, err := decodeToken(enc, scope+"x"); err == nil && scopeHash(scope) != scopeHash(scope+"x") {
			t.Fatalf("token of scope %q accepted for another scope", scope)
		}
	})
}
