package content

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

// Object is an object as seen on one branch.
type Object struct {
	ID            int64
	GUID          string
	APIIdentifier string // "" = none
	TypeID        int64
	// LastTransaction is the last transaction that changed the object
	// locally on the branch read: its object row there (create, delete,
	// restore, apiIdentifier) or its values stored there (null markers that
	// hide inherited values included). An object without local rows on the
	// branch (all inherited) has 0: NovaDB's CmsObjectMetadata.lastTransaction
	// is "the ID of the last transaction when local values of this object
	// have been changed on the current branch", and there is none. Changes
	// on ancestor branches do not move it; see Version.
	LastTransaction int64
	// Version is the newest transaction that changed anything the object's
	// view on this branch is built from: the effective object row and every
	// value row of the object along the branch chain (inherited ones
	// included). It only grows with writes and is meant for validators
	// (ETags); it is not on the wire.
	Version int64
	Deleted bool
	// Values are sorted by attribute, variant, language and sort key.
	Values []Value
}

// Value is one value row. JSON is a scalar (string, number, bool); null in
// a write means "remove this value".
type Value struct {
	Attribute   int64
	Language    int64 // 0 = language independent
	Variant     int64 // 0 = none
	SortReverse int64
	// UnitRef is the value's unit (an object of TypeUnit); nil = none.
	UnitRef *int64
	JSON    json.RawMessage
	// Inherit, on an update, removes the branch's own rows of (Attribute,
	// Language, Variant), null markers included, so the value inherited
	// along the branch chain shows again ("back to inherited"). JSON must
	// be null. Where nothing is inherited it removes the value, as null
	// does.
	Inherit bool
}

// ValueInput is a value in a write request. A nil SortReverse takes the
// row's position within its (attribute, language, variant) group.
type ValueInput struct {
	Attribute   int64
	Language    int64
	Variant     int64
	SortReverse *int64
	// UnitRef names the value's unit: a live object of TypeUnit visible on
	// the branch; when the attribute names a unit (AttrUnit), one of the
	// same unit group (units.go). nil = none. Ignored on a null value.
	UnitRef *int64
	JSON    json.RawMessage
	// Inherit, on an update, removes the branch's own rows of (Attribute,
	// Language, Variant), null markers included, so the value inherited
	// along the branch chain shows again ("back to inherited"). JSON must
	// be null. Where nothing is inherited it removes the value, as null
	// does.
	Inherit bool
}

// ObjectInput is an object in a create or update request.
type ObjectInput struct {
	// ID or GUID address the object on update; on create an ID is ignored
	// and a GUID, if given, is used for the new object.
	ID   int64
	GUID string
	// APIIdentifier: nil = not sent. On update a different value than the
	// one set is ErrForbidden.
	APIIdentifier *string
	TypeID        int64
	// Deleted: nil = not sent. On update false restores a soft-deleted
	// object on the branch written (true is ErrInvalid: deletion is
	// DeleteObjects); on create it is ignored.
	Deleted *bool
	Values  []ValueInput
}

// ReadOptions select what a read returns. The filter lists hold
// identifiers (ID, GUID or ApiIdentifier); empty lists do not filter.
type ReadOptions struct {
	// Inherited adds values inherited along the branch chain; otherwise
	// only values stored on the branch itself are returned.
	Inherited  bool
	Attributes []string
	Languages  []string
	Variants   []string
	// Caller is who reads. User objects (TypeUser: login names, flags,
	// grants) are read by administrators and by the user itself only
	// (auth.Principal.ReadsUser); to others they do not exist (ErrNotFound,
	// absent from lists). Nil is a trusted internal read without the rule;
	// every API read sets it.
	Caller *auth.Principal
	// SkipMissing makes GetObjects leave out the identifiers that name no
	// object visible to the caller instead of failing with ErrNotFound:
	// the found objects come back in the order of the identifiers, in the
	// same queries. An ambiguous identifier still fails. Other reads
	// ignore it.
	SkipMissing bool
	// AsOf, when not 0, reads the objects as the transaction AsOf left
	// them (history.go; GetObjects, GetTypedObjects): an object without a
	// row by then is ErrNotFound (left out of a list),
	// a transaction beyond the newest or older than the history retention
	// is ErrInvalid. Identifiers resolve as they do now.
	AsOf int64
}

// hidesUser reports whether o keeps user object id from its caller.
func (o ReadOptions) hidesUser(id int64) bool {
	return o.Caller != nil && !o.Caller.ReadsUser(id)
}

// ListQuery pages a list.
type ListQuery struct {
	ReadOptions
	// Deleted: nil = deleted and live objects, else only those.
	Deleted *bool
	// Take: 0 = DefaultTake; 1..MaxTake, anything else is ErrInvalid.
	Take int
	// Continue is the opaque token of the previous page ("" = first page).
	Continue string
}

// Page is one page of a list. Continue is "" on the last page.
type Page struct {
	Objects  []Object
	Continue string
}

// Change describes who writes and why.
type Change struct {
	// Caller is who writes, the same principal queries take: its User()
	// (the principal, or the user it acts for) names the transaction, its
	// Admin lets it write users and the security attributes (security.go).
	// Nil is an anonymous writer that is no administrator.
	Caller  *auth.Principal
	Comment string
	// IfMatch, when set, makes an update or delete of one object or branch
	// conditional on its current state (precondition.go); creates ignore it.
	IfMatch *Precondition[Object]
	// InTx, when set, runs inside the write transaction just before it
	// commits; an error rolls the whole write back. A job records how far
	// it got in the same transaction as the objects it wrote (pkg/jobs), so
	// a job taken over after a crash neither repeats nor skips a write.
	InTx func(ctx context.Context, tx store.Tx) error
}

// user names the transaction ("" without a caller).
func (c Change) user() string {
	if c.Caller == nil {
		return ""
	}
	return c.Caller.User()
}

// admin reports whether the caller is an administrator.
func (c Change) admin() bool { return c.Caller != nil && c.Caller.Admin }

// Transaction is a committed write.
type Transaction struct {
	ID      int64
	Time    time.Time
	Branch  int64
	User    string
	Comment string
}

// UpdateResult is the outcome of UpdateObjects.
type UpdateResult struct {
	UpdatedObjects int
	CreatedValues  int
	Transaction    Transaction
}
