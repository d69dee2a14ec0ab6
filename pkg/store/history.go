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

	// PruneHistory deletes the versions written by the up to limit oldest
	// transactions older than before, except those still the newest of
	// their value; it returns how many it deleted.
	PruneHistory(ctx context.Context, before time.Time, limit int) (int, error)
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
