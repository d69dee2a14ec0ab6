// Package store is the persistence contract of the CMS: numbered write
// transactions, objects with global numeric ids, attribute values per
// language and variant, comments on objects, and a transactional outbox for
// events.
//
// The model is deliberately domain-neutral. Branch inheritance, typed objects
// and wire formats live above this package (in pkg/content, pkg/branches …);
// a Store only stores rows keyed by branch and enforces the few invariants a
// database can enforce cheaply (unique ids, GUIDs and API identifiers per
// branch, monotonic transaction ids).
//
// Two implementations sit beside this package: sqlite (embedded, the laptop
// default) and postgres (distributed). Both pass the conformance suite in
// storetest; any difference between them is a bug. Their statements, reads
// and write transactions are shared in sqlstore; each adds its dialect, its
// connections, migrations and outbox claim.
//
// # Transactions
//
// Every write happens in a Tx opened by Store.Begin. Begin allocates the
// transaction id, which doubles as the change-tracking version: write
// transactions are serialised (a lock on the transaction counter is taken at
// Begin and held until Commit or Rollback), so ids are committed in increasing
// order without gaps and "everything with ModifiedTx > v" is a safe
// incremental read. Keep write transactions short. A rolled-back transaction
// leaves nothing behind, and its id is handed out again.
package store

import (
	"context"
	"time"
)

// Store is the whole storage component: a Reader over committed data, write
// transactions, and the outbox relay API.
//
// Implementations are safe for concurrent use.
type Store interface {
	Reader
	OutboxRelay
	WebhookLog
	History

	// Begin opens a write transaction and allocates its id. It blocks (up to
	// ctx) while another write transaction is open. A zero meta.Time is
	// replaced by the store's clock. Time is kept with microsecond precision,
	// in UTC.
	Begin(ctx context.Context, meta TxMeta) (Tx, error)

	// LastTransactionID returns the id of the newest committed transaction,
	// 0 when none was committed yet.
	LastTransactionID(ctx context.Context) (int64, error)

	// LastOutboxTransaction returns the id of the newest committed
	// transaction that appended an outbox event whose subject starts with
	// subjectPrefix, 0 when none did (since the store was created or
	// migrated to track it). Unlike the outbox, whose rows go once they
	// are published, it is not pruned. Transactions that appended no such
	// event (job bookkeeping, say) do not move it, so a consumer of those
	// events knows which transaction it must have handled to be current.
	LastOutboxTransaction(ctx context.Context, subjectPrefix string) (int64, error)

	// Ping checks that the database is reachable.
	Ping(ctx context.Context) error

	// Close releases all resources. Open transactions must be finished first.
	Close() error
}

// Reader is the read side. On a Store it sees committed data; on a Tx it also
// sees the transaction's own uncommitted writes.
type Reader interface {
	// GetTransaction returns one committed transaction, or ErrNotFound.
	GetTransaction(ctx context.Context, id int64) (Transaction, error)

	// GetTransactions fetches the committed transactions of ids in a
	// single query, in ascending id order, each once; unknown ids are left
	// out.
	GetTransactions(ctx context.Context, ids []int64) ([]Transaction, error)

	// GetObject returns the object row stored on exactly this branch (no
	// inheritance), deleted or not, or ErrNotFound.
	GetObject(ctx context.Context, branch, id int64) (Object, error)

	// GetObjects fetches many object rows of one branch in a single query.
	// The result holds one entry per requested id that exists, in the order
	// of ids (a repeated id appears repeatedly); missing ids are left out, so
	// callers compare lengths or ids to detect them. Tombstones are included.
	GetObjects(ctx context.Context, branch int64, ids []int64) ([]Object, error)

	// FindObjects looks objects of one branch up by GUID and/or API
	// identifier (both lists are OR-ed) in a single query, ordered by id.
	FindObjects(ctx context.Context, branch int64, guids, apiIdentifiers []string) ([]Object, error)

	// ListObjects pages through the object rows of one branch in id order.
	ListObjects(ctx context.Context, branch int64, q ObjectQuery) ([]Object, error)

	// ListValues returns the values stored on exactly this branch for the
	// given objects in a single query, ordered by object id, attribute,
	// variant, language and sort key. f narrows the result; its zero value
	// returns every value.
	ListValues(ctx context.Context, branch int64, objectIDs []int64, f ValueFilter) ([]Value, error)

	// ListBranchObjectIDs pages through the ids of the objects that have
	// an object row or a value stored on exactly this branch (what a
	// child branch holds of its own), ascending, after afterID, at most
	// limit (<= 0: no limit).
	ListBranchObjectIDs(ctx context.Context, branch, afterID int64, limit int) ([]int64, error)

	ChainReader
	CommentReader
	JobReader
}

// ChainReader reads several branches at once, so that resolving inheritance
// along a branch chain costs one query per batch instead of one per branch
// or per object. Results carry each row's Branch; which row wins is the
// caller's business.
type ChainReader interface {
	// GetObjectsIn returns the rows of ids stored on any of branches, in a
	// single query, ordered by id, then branch. Missing ids are left out.
	GetObjectsIn(ctx context.Context, branches, ids []int64) ([]Object, error)

	// FindObjectsIn looks rows up by GUID and/or API identifier (OR-ed) on
	// any of branches, or on every branch when branches is empty, ordered
	// by id, then branch.
	FindObjectsIn(ctx context.Context, branches []int64, guids, apiIdentifiers []string) ([]Object, error)

	// ListObjectsIn pages through the rows of branches in id order (then
	// branch). AfterID and TypeIDs select ids; Limit caps the number of
	// distinct ids, so every row of an id is in the same page. Deleted must
	// be nil (a tombstone on one branch may be overridden on another, so
	// filtering rows would be wrong): ErrInvalidArgument otherwise.
	ListObjectsIn(ctx context.Context, branches []int64, q ObjectQuery) ([]Object, error)

	// ListValuesIn returns the values of objectIDs stored on any of
	// branches in a single query, ordered by object id, attribute, variant,
	// language, sort key, then branch. f narrows the result.
	ListValuesIn(ctx context.Context, branches, objectIDs []int64, f ValueFilter) ([]Value, error)
}

// Tx is a write transaction. It is not safe for concurrent use. After Commit
// or Rollback every method returns ErrTxDone (Rollback after Commit is a
// no-op returning nil, so `defer tx.Rollback()` is the idiom).
type Tx interface {
	Reader

	// ID is the transaction id allocated by Begin.
	ID() int64
	// Meta is the transaction record that Commit makes visible.
	Meta() Transaction

	// NewObjectIDs allocates n fresh object ids, increasing, never handed out
	// before and greater than any id written with PutObjects. Ids allocated in
	// a rolled-back transaction may be handed out again.
	NewObjectIDs(ctx context.Context, n int) ([]int64, error)

	// PutObjects inserts or replaces object rows, keyed by (Branch, ID).
	// CreatedTx is set to this transaction on insert and kept on update;
	// ModifiedTx is always set to this transaction (the callers' values of
	// both are ignored). An empty GUID is ErrInvalidArgument; an empty
	// APIIdentifier means none. A GUID or API identifier already used by
	// another object of the same branch is ErrConflict, and then the whole
	// transaction should be rolled back.
	PutObjects(ctx context.Context, objs ...Object) error

	// DeleteObjects soft-deletes object rows of one branch: they become
	// tombstones (Deleted = true, ModifiedTx = this transaction) and keep
	// their values. It returns how many rows were not deleted before; ids
	// without a row on this branch are ignored. PutObjects with Deleted =
	// false restores a row.
	DeleteObjects(ctx context.Context, branch int64, ids []int64) (int, error)

	// PurgeObjects permanently removes object rows of one branch together
	// with their values on that branch (not on other branches) and returns
	// how many object rows it removed. Unknown ids are ignored.
	PurgeObjects(ctx context.Context, branch int64, ids []int64) (int, error)

	// PurgeBranch permanently removes every object row, value and comment
	// stored on branch and returns how many object rows it removed.
	// Transactions and outbox events are kept.
	PurgeBranch(ctx context.Context, branch int64) (int, error)

	// PutValues inserts or replaces values, keyed by (Branch, ObjectID,
	// AttributeID, Language, Variant, SortReverse). ModifiedTx is set to this
	// transaction. JSON must be valid JSON (nil is stored as JSON null).
	// UnitRef is stored as given (nil = none); replacing a value replaces
	// its unit too. The SQL stores send the rows with the transaction's
	// next statement or its commit (one round trip on PostgreSQL), so a
	// refusal by the database the checks here did not foresee is reported
	// there.
	PutValues(ctx context.Context, values ...Value) error

	// DeleteValues removes the values of the given objects of one branch that
	// match f (its zero value matches every value) and returns how many rows
	// it removed. Together with PutValues this replaces multi-valued
	// attributes.
	DeleteValues(ctx context.Context, branch int64, objectIDs []int64, f ValueFilter) (int, error)

	// AppendOutbox queues events in this transaction: they become claimable
	// exactly when the transaction commits and vanish with a rollback.
	// Like PutValues' rows, the SQL stores send them with the next
	// statement or the commit.
	AppendOutbox(ctx context.Context, events ...OutboxEvent) error

	CommentWriter
	JobWriter

	// Commit makes all writes and the transaction record visible atomically.
	Commit(ctx context.Context) error
	// Rollback discards all writes.
	Rollback() error
}

// OutboxRelay is what an outbox relay needs: claim a batch, publish it, ack it.
//
// Delivery is at least once: a claimed event that is not acked within the
// lease (WithOutboxLease) becomes claimable again, so consumers deduplicate
// by MsgID. Claims are in outbox id order, which is commit order. So that
// the stream gets the events in commit order, one relay at a time claims:
// a store that several processes share (PostgreSQL) lets only the holder
// of its relay lock claim (the others' claims return nothing until its
// session is gone, and the next holder claims the unacked events first); a
// store whose database serves one process (SQLite) runs one relay and
// releases the leases of a dead process when it opens.
type OutboxRelay interface {
	// ClaimOutbox leases up to limit committed, unacked, unleased events,
	// oldest first.
	ClaimOutbox(ctx context.Context, limit int) ([]OutboxEvent, error)
	// AckOutbox removes delivered events. Unknown ids are ignored.
	AckOutbox(ctx context.Context, ids []int64) error
}

// TxMeta describes a write transaction as its caller sees it.
type TxMeta struct {
	User    string
	Comment string
	// Branch the transaction is about; 0 is the root branch (NovaDB's
	// CmsTransaction.branchRef).
	Branch int64
	// Time of the transaction; zero means now.
	Time time.Time
}

// Transaction is a committed (or, from Tx.Meta, an open) transaction record.
type Transaction struct {
	ID      int64
	Time    time.Time
	User    string
	Comment string
	Branch  int64
}

// Object is one object row on one branch. A row on a child branch overrides
// the parent's row of the same ID; resolving that is the caller's business.
type Object struct {
	ID     int64
	Branch int64 // 0 = root
	TypeID int64
	// GUID is unique per branch and required.
	GUID string
	// APIIdentifier is optional ("" = none) and unique per branch.
	APIIdentifier string
	Deleted       bool
	CreatedTx     int64 // set by the store
	ModifiedTx    int64 // set by the store
}

// Value is one attribute value of an object on a branch. Multi-valued
// attributes use one row per value, told apart (and ordered) by SortReverse.
type Value struct {
	ObjectID    int64
	Branch      int64
	AttributeID int64
	Language    int64 // 0 = language independent
	Variant     int64 // 0 = no variant
	SortReverse int64
	// JSON is the value as JSON text, usually a scalar.
	JSON []byte
	// UnitRef is the id of the value's unit object (NovaDB
	// CmsValue.unitRef); nil = not unit specific. The store keeps it as
	// given; checking that it names a unit is the caller's business.
	UnitRef    *int64
	ModifiedTx int64 // set by the store
}

// ValueFilter narrows a value query; an empty list does not filter.
type ValueFilter struct {
	AttributeIDs []int64
	Languages    []int64
	Variants     []int64
}

// ObjectQuery selects a page of object rows of one branch, in id order.
type ObjectQuery struct {
	// TypeIDs filters by type; empty means all types.
	TypeIDs []int64
	// Deleted filters tombstones: nil = both, else only rows with this flag.
	Deleted *bool
	// AfterID starts after this id (keyset paging: pass the last id seen).
	AfterID int64
	// Limit caps the page; <= 0 means no limit.
	Limit int
}

// OutboxEvent is an event queued in a transaction for publication.
type OutboxEvent struct {
	ID      int64 // set by the store, increasing in commit order
	TxID    int64 // set by the store
	Subject string
	// MsgID is the publisher's deduplication id (e.g. Nats-Msg-Id).
	MsgID   string
	Payload []byte
	// Trace is the W3C traceparent the event is published under; the
	// store fills it from the appending context's span when empty.
	Trace string
	// Attempts counts claims including the current one (set by ClaimOutbox).
	Attempts int
}
