package store

import (
	"context"
	"time"
)

// History reads the value versions the store keeps (issue 33): every write
// and delete of a value appends one version in the same transaction, so an
// object's state at any kept transaction can be rebuilt.
type History interface {
	// ValueHistory returns the versions of q.ObjectID on q.Branch written
	// by transactions before q.BeforeTx (0 = no bound), newest transaction
	// first, then by attribute, variant, language and sort. At most
	// q.Limit transactions are returned whole (0 = all).
	ValueHistory(ctx context.Context, q HistoryQuery) ([]ValueVersion, error)

	// ObjectHistory returns what the q.Limit newest transactions before
	// q.BeforeTx (0 = no bound; q.Limit 0 = all) that wrote q.ObjectID's
	// row or values on q.Branch left there: the transactions newest first,
	// the row versions (Object.ModifiedTx = the version's transaction) and
	// the value versions in ValueHistory's order.
	ObjectHistory(ctx context.Context, q HistoryQuery) (ObjectChanges, error)

	// ObjectsAsOf returns the object rows of ids on branches as the
	// transaction asOf left them (the newest row version at or before it),
	// tombstones included, ordered by id, then branch; a row without a
	// version by then is left out. ModifiedTx is the version's transaction,
	// CreatedTx the row's oldest kept version.
	ObjectsAsOf(ctx context.Context, branches, ids []int64, asOf int64) ([]Object, error)

	// ValuesAsOf returns the values of objectIDs on branches as the
	// transaction asOf left them (per value the newest version at or
	// before it, unless that version deleted it), ordered like
	// ListValuesIn. ModifiedTx is the version's transaction.
	ValuesAsOf(ctx context.Context, branches, objectIDs []int64, asOf int64) ([]Value, error)

	// TransactionObjectIDs returns the ids of the objects whose row or
	// values on branch transaction tx wrote, ascending, each once.
	TransactionObjectIDs(ctx context.Context, branch, tx int64) ([]int64, error)

	// PruneHistory deletes the value and row versions written by the up
	// to limit oldest transactions after afterTx that are older than
	// before, except those still the newest of their value or row. It
	// returns how many versions it deleted and the newest transaction it
	// covered, to pass as afterTx next (0: no such transaction is left).
	PruneHistory(ctx context.Context, before time.Time, afterTx int64, limit int) (deleted int, lastTx int64, err error)
}

// ObjectChanges is a page of one object's history (ObjectHistory).
type ObjectChanges struct {
	Transactions []int64 // newest first
	Rows         []Object
	Values       []ValueVersion
}

// HistoryQuery selects the versions of one object.
type HistoryQuery struct {
	Branch   int64
	ObjectID int64
	BeforeTx int64 // only transactions with a smaller id; 0 = no bound
	Limit    int   // transactions; 0 = all
}

// ValueVersion is one value as a transaction left it. Deleted = the
// transaction deleted the value (JSON and UnitRef are then empty).
type ValueVersion struct {
	Tx          int64
	ObjectID    int64
	Branch      int64
	AttributeID int64
	Language    int64
	Variant     int64
	SortReverse int64
	JSON        []byte
	UnitRef     *int64
	Deleted     bool
}
