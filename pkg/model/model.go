// Package model holds the rules of the content model that every reader and
// writer of content must apply alike: the branch tree and a branch's chain,
// which row and value wins along a chain, the language fallback chain, an
// object's display name, which attributes are secret and which data types
// are references.
//
// pkg/content (the store-backed service), pkg/indexwriter (the indexer),
// pkg/delivery and pkg/indexquery (the readers of the index) call these
// functions instead of keeping their own versions. The package is pure:
// types and functions over rows already read, no I/O.
package model

// The well-known ids the rules of this package read (the NovaDB system
// model). pkg/content names the rest of the system model.
const (
	// BranchDefault is the root of the branch tree; branch objects and
	// their parents live on it.
	BranchDefault int64 = 4
	// AttrName is the name of every object: the display name unless the
	// object's type names another attribute (AttrTypeDisplayName).
	AttrName int64 = 1000
	// AttrFallbackLanguage (on a language object) names the language whose
	// values stand in for missing ones.
	AttrFallbackLanguage int64 = 2002
	// AttrBranchParent (on a branch object) is the branch it inherits from.
	AttrBranchParent int64 = 4000
	// AttrTypeDisplayName (objectTypeDisplayNameAttribute, on a type)
	// names the attribute that holds the display name of the type's objects.
	AttrTypeDisplayName int64 = 5005
	// AttrUserPassword holds a user's password hash: a secret.
	AttrUserPassword int64 = 1101
	// AttrUserTokenSessions holds a user's bearer-token session record
	// (pkg/auth session.go): server bookkeeping no client reads.
	AttrUserTokenSessions int64 = 1107
	// AttrWebHookSecret holds the HMAC key of a webhook definition (type
	// 210): a secret the dispatcher reads from the store, never a client.
	AttrWebHookSecret int64 = 1221
)

// SecretAttribute reports whether values of attribute id must never leave
// the service (reads drop them, the index never holds them): today the
// password hash, the webhook signing secret and the bearer-token session
// record.
func SecretAttribute(id int64) bool {
	return id == AttrUserPassword || id == AttrWebHookSecret || id == AttrUserTokenSessions
}
