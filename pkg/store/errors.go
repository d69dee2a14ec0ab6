package store

import "errors"

// Sentinel errors. Implementations wrap them with %w; test with errors.Is.
var (
	// ErrNotFound: the requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness rule was violated (GUID or API identifier
	// already used on the branch).
	ErrConflict = errors.New("store: conflict")
	// ErrInvalidArgument: the caller passed something the store cannot
	// store (an empty GUID, invalid JSON, a negative count …).
	ErrInvalidArgument = errors.New("store: invalid argument")
	// ErrTxDone: the transaction was already committed or rolled back.
	ErrTxDone = errors.New("store: transaction already finished")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)
