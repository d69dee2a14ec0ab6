package store

import (
	"errors"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// Sentinel errors. Implementations wrap them with %w; test with errors.Is.
var (
	// ErrNotFound: the requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness rule was violated (GUID or API identifier
	// already used on the branch).
	ErrConflict = errors.New("store: conflict")
	// ErrInvalidArgument means the caller passed something the store
	// cannot store (an empty GUID, invalid JSON, a NUL in a text, a negative
	// count …); it is of kind errkind.Invalid (400).
	ErrInvalidArgument = errkind.New(errkind.Invalid, "invalid argument")
	// ErrTxDone: the transaction was already committed or rolled back.
	ErrTxDone = errors.New("store: transaction already finished")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)
