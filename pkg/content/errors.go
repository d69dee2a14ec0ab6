package content

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the service returns for a client mistake
// wraps one of them (test with errors.Is); anything else is a server fault.
var (
	// ErrNotFound: a branch, object, type or filter identifier does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: an identifier matches more than one object.
	ErrAmbiguous = errors.New("the object id is not unique")
	// ErrInvalid: the request data is malformed or violates the model
	// (data type, language, multiplicity, references, protected objects,
	// a GUID or ApiIdentifier already taken: NovaDB declares no 409).
	ErrInvalid = errors.New("invalid request")
	// ErrForbidden: the operation is not allowed, e.g. changing an
	// ApiIdentifier once set.
	ErrForbidden = errors.New("forbidden")
	// ErrPreconditionFailed: the current state of the resource a write
	// changes does not satisfy the write's Precondition (If-Match).
	ErrPreconditionFailed = errors.New("precondition failed")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}
