package content

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Continuation tokens are opaque to clients: base64url of
// "c1.<after id>.<scope hash>". The scope hash binds a token to the list
// it came from (branch, type, filters), so a token replayed on another
// list is ErrInvalid instead of silently skipping objects. Paging is keyset
// paging by id: a token stays valid across writes; objects created later
// with larger ids appear on later pages.

const tokenPrefix = "c1"

func scopeHash(scope string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(scope))
	return strconv.FormatUint(h.Sum64(), 36)
}

// encodeToken returns the token continuing after id within scope.
func encodeToken(after int64, scope string) string {
	raw := tokenPrefix + "." + strconv.FormatInt(after, 10) + "." + scopeHash(scope)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeToken returns the id to continue after; "" is the first page.
func decodeToken(tok, scope string) (int64, error) {
	if tok == "" {
		return 0, nil
	}
	if len(tok) > 128 {
		return 0, invalidf("continuation token too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, invalidf("malformed continuation token")
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != tokenPrefix {
		return 0, invalidf("malformed continuation token")
	}
	after, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || after < 0 {
		return 0, invalidf("malformed continuation token")
	}
	if parts[2] != scopeHash(scope) {
		return 0, invalidf("continuation token belongs to another list")
	}
	return after, nil
}

// listScope names a list for token binding.
func listScope(kind string, branch, typ int64, deleted *bool) string {
	d := "any"
	if deleted != nil {
		d = strconv.FormatBool(*deleted)
	}
	return fmt.Sprintf("%s/%d/%d/%s", kind, branch, typ, d)
}

// ContinueToken is the opaque keyset token for other packages' lists (the
// job list): it continues after id within the list named by scope.
func ContinueToken(after int64, scope string) string { return encodeToken(after, scope) }

// ParseContinueToken reads a ContinueToken of the same scope ("" = first
// page); a malformed or foreign token is ErrInvalid.
func ParseContinueToken(tok, scope string) (int64, error) { return decodeToken(tok, scope) }
