package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// The write rules of the security model (see accounts.go for the model):
//
//   - user objects (type TypeUser), webhook definitions (type
//     TypeWebHookDefinition: each sends every matching change to a URL its
//     writer chooses) and the system objects of the model (the type,
//     AttrUserName and the security attributes) are created, changed and
//     deleted by administrators only (Change.Caller.Admin), else ErrForbidden;
//   - values of the security attributes (the webhook secret among them)
//     are written by administrators only, on any object;
//   - users live on the default branch: a user object created or changed
//     elsewhere is ErrInvalid;
//   - a password value is hashed with bcrypt before it is stored; null
//     removes it (the user can no longer log in);
//   - a user has a user name. Names are not forced unique (older data and
//     clients may hold duplicates); a name shared by several live users
//     cannot log in (Authenticate) and GetUserDisplayName answers 422.

// PasswordCost is the bcrypt cost of stored password hashes.
const PasswordCost = bcrypt.DefaultCost

// securityAttrs are the attributes only administrators write.
var securityAttrs = map[int64]bool{
	AttrUserPassword: true, AttrUserAdmin: true, AttrUserInternal: true,
	AttrUserReadBranches: true, AttrUserWriteBranches: true, AttrUserTokenGeneration: true,
	AttrUserTokenSessions: true,
	AttrWebHookSecret:     true,
}

// isSecurityObject reports whether id is a system object of the security
// model.
func isSecurityObject(id int64) bool {
	return id == TypeUser || id == AttrUserName || securityAttrs[id]
}

func forbiddenf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrForbidden}, args...)...)
}

// guardObject checks that ch may write object id of type typ on branch.
func guardObject(ch Change, branch, id, typ int64) error {
	if typ != TypeUser && typ != TypeWebHookDefinition && !isSecurityObject(id) {
		return nil
	}
	if !ch.admin() {
		switch typ {
		case TypeUser:
			return forbiddenf("only administrators may create, change or delete users")
		case TypeWebHookDefinition:
			return forbiddenf("only administrators may create, change or delete webhook definitions (type %d)", TypeWebHookDefinition)
		}
		return forbiddenf("object %d belongs to the security model: only administrators may change it", id)
	}
	if typ == TypeUser && branch != BranchDefault {
		return invalidf("users live on the default branch %d, not on branch %d", BranchDefault, branch)
	}
	return nil
}

// checkSecurityValue checks that ch may write a value of attribute attr
// and, for a password, returns the JSON to store (the hash; nil = remove).
// handled is false when the value is not a password and needs the usual
// checks. The error never quotes the password.
func checkSecurityValue(ch Change, attr int64, raw json.RawMessage) (out []byte, handled bool, err error) {
	if !securityAttrs[attr] {
		return nil, false, nil
	}
	if !ch.admin() {
		return nil, false, forbiddenf("attribute %d: only administrators may set passwords, rights and webhook secrets", attr)
	}
	if attr != AttrUserPassword {
		return nil, false, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true, nil
	}
	var pw string
	if json.Unmarshal(raw, &pw) != nil {
		return nil, true, invalidf("attribute %d: the password must be a string", attr)
	}
	hash, err := hashPassword(pw)
	if err != nil {
		return nil, true, err
	}
	return jsonOf(hash), true, nil
}

// hashPassword returns the bcrypt hash of a non-empty password of at most
// 72 bytes (bcrypt's limit; longer ones would be silently truncated by
// other implementations, so they are refused).
func hashPassword(pw string) (string, error) {
	switch {
	case strings.TrimSpace(pw) == "":
		return "", invalidf("attribute %d: the password is empty", AttrUserPassword)
	case len(pw) > 72:
		return "", invalidf("attribute %d: the password is longer than 72 bytes", AttrUserPassword)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), PasswordCost)
	if errors.Is(err, bcrypt.ErrPasswordTooLong) {
		return "", invalidf("attribute %d: the password is longer than 72 bytes", AttrUserPassword)
	}
	return string(h), err
}

// userNamesOf returns the user names written for user objects: ids[i] is
// the object of checked[i], types[i] its type.
func userNamesOf(ids, types []int64, checked []validated) (map[int64]string, error) {
	out := map[int64]string{}
	for i, c := range checked {
		if types[i] != TypeUser {
			continue
		}
		g, ok := c.groups[groupKey{attr: AttrUserName}]
		if !ok {
			continue
		}
		if len(g) != 1 || g[0].json == nil {
			return nil, invalidf("attribute %d: a user needs a user name", AttrUserName)
		}
		var n string
		if err := json.Unmarshal(g[0].json, &n); err != nil {
			return nil, invalidf("attribute %d: the user name must be a string", AttrUserName)
		}
		out[ids[i]] = n
	}
	return out, nil
}
