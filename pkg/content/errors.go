package content

import (
	"fmt"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// Sentinel errors. Every error the service returns for a client mistake
// wraps one of them (test with errors.Is); anything else is a server fault.
var (
	// ErrNotFound: a branch, object, type or filter identifier does not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "not found")
	// ErrAmbiguous: an identifier matches more than one object.
	ErrAmbiguous = errkind.New(errkind.Ambiguous, "the object id is not unique")
	// ErrInvalid: the request data is malformed or violates the model
	// (data type, language, multiplicity, references, protected objects,
	// a GUID or ApiIdentifier already taken: NovaDB declares no 409).
	ErrInvalid = errkind.New(errkind.Invalid, "invalid request")
	// ErrForbidden: the operation is not allowed, e.g. changing an
	// ApiIdentifier once set.
	ErrForbidden = errkind.New(errkind.Forbidden, "forbidden")
	// ErrPreconditionFailed: the current state of the resource a write
	// changes does not satisfy the write's Precondition (If-Match).
	ErrPreconditionFailed = errkind.New(errkind.PreconditionFailed, "precondition failed")
)

// ValueError is an invalid value of a write: which attribute, and when
// known which language and variant, it is about, so a client can show the
// error at its field (the ProblemDetails members attribute, language and
// variant). It wraps the error (ErrInvalid, …) unchanged.
type ValueError struct {
	Attribute         int64
	Language, Variant *int64 // nil: not known (e.g. a reference checked for the attribute as a whole)
	// SortReverse is the value's position among the rows of its
	// (attribute, language, variant): the sortReverse it was sent with,
	// else its place in the request; nil when not known.
	SortReverse *int64
	Err         error
}

func (e *ValueError) Error() string { return e.Err.Error() }
func (e *ValueError) Unwrap() error { return e.Err }

// ValueField names the field for the transport (gateway.ValueFielder).
func (e *ValueError) ValueField() (attribute int64, language, variant *int64) {
	return e.Attribute, e.Language, e.Variant
}

// ValuePosition names the value's row for the transport (gateway.ValuePositioner).
func (e *ValueError) ValuePosition() (int64, bool) {
	if e.SortReverse == nil {
		return 0, false
	}
	return *e.SortReverse, true
}

// atValue wraps err as a ValueError of the attribute (and language and
// variant, when not nil).
func atValue(err error, attribute int64, language, variant *int64) error {
	if err == nil {
		return nil
	}
	e := &ValueError{Attribute: attribute, Err: err}
	if language != nil {
		l := *language
		e.Language = &l
	}
	if variant != nil {
		v := *variant
		e.Variant = &v
	}
	return e
}

// atRow adds the value's position to a ValueError err made by atValue.
func atRow(err error, sortReverse int64) error {
	if e, ok := err.(*ValueError); ok {
		e.SortReverse = &sortReverse
	}
	return err
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}
