// Package errkind is the one set of domain error kinds. Domain packages
// declare their sentinel errors with New, keeping their own messages, and
// one mapping (services/internal/gateway.DomainStatus) turns an error of
// any kind into the same status in every API group.
package errkind

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Kind classifies a domain error. It is an error itself, so errors.Is(err,
// errkind.NotFound) tells any sentinel declared with New by its kind.
type Kind int

// The kinds, with the HTTP status every group answers for them.
const (
	// Invalid is a request the domain refuses as malformed (400).
	Invalid Kind = iota + 1
	// NotFound is a resource that does not exist or is hidden (404).
	NotFound
	// Ambiguous is an identifier that names more than one object (422).
	Ambiguous
	// TooLarge is a value or request beyond a configured limit (413).
	TooLarge
	// PreconditionFailed is a stale If-Match (412).
	PreconditionFailed
	// Forbidden is a caller without the grant the operation needs (403).
	Forbidden
	// Unsupported is a valid request for something not implemented (501).
	Unsupported
	// Unprocessable is a well-formed request the domain cannot carry out
	// as asked, e.g. an upload beyond the total size limit or a reference
	// to content that does not exist (422).
	Unprocessable
	// RangeNotSatisfiable is a byte range outside the content (416).
	RangeNotSatisfiable
	// TooMany is a caller at one of its per-user caps (render slots, live
	// subscriptions, open uploads…): 429 with Retry-After, the
	// ProblemDetails naming the cap. An error of this kind may say when
	// to retry and which setting it met (RetryAfter() time.Duration,
	// LimitName() string; pkg/fairshare.LimitError).
	TooMany
)

var names = map[Kind]string{Invalid: "invalid", NotFound: "not found", Ambiguous: "ambiguous",
	TooLarge: "too large", PreconditionFailed: "precondition failed", Forbidden: "forbidden",
	Unsupported: "unsupported", Unprocessable: "unprocessable", RangeNotSatisfiable: "range not satisfiable", TooMany: "too many"}

func (k Kind) Error() string { return names[k] }

// kinds lists every Kind for Of.
var kinds = []Kind{Invalid, NotFound, Ambiguous, TooLarge, PreconditionFailed, Forbidden, Unsupported,
	Unprocessable, RangeNotSatisfiable, TooMany}

// New returns a sentinel error with message msg that is of kind k.
func New(k Kind, msg string) error { return &sentinel{kind: k, msg: msg} }

type sentinel struct {
	kind Kind
	msg  string
}

func (e *sentinel) Error() string { return e.msg }

// Is makes errors.Is(err, kind) true for the sentinel's kind.
func (e *sentinel) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.kind
}

// Of returns the kind of err (the first in its chain), or 0 when it has
// none.
func Of(err error) Kind {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return 0
}

// Clip shortens s to at most n bytes for an error message that quotes
// input (a 10,000-character path segment must not be echoed whole): the cut
// falls on a character boundary and is marked with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// labels are the sentinel messages that name only an error's kind
// ("invalid argument: filter: …"): a log keeps them, a client reading a
// 400 learns nothing from them that the status has not said.
var labels = []string{"invalid argument", "invalid request"}

// TrimLabel returns message s without the kind labels it starts with
// ("invalid argument: filter: unknown operator" → "filter: unknown
// operator"); a label with nothing after it stays.
func TrimLabel(s string) string {
	for {
		rest, ok := cutLabel(s)
		if !ok {
			return s
		}
		s = rest
	}
}

// HasLabel reports whether message s starts with a kind label, which
// TrimLabel would remove.
func HasLabel(s string) bool {
	_, ok := cutLabel(s)
	return ok
}

func cutLabel(s string) (string, bool) {
	for _, l := range labels {
		if rest, ok := strings.CutPrefix(s, l+": "); ok && rest != "" {
			return rest, true
		}
	}
	return s, false
}
