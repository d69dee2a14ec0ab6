// Package params holds the one rule per kind of request parameter that the
// four API groups share: page sizes (take), offsets (skip), depths
// (resolveDepth), list lengths (sort keys) and numeric ids. Domain packages
// and transports call these instead of checking ranges themselves, so the
// same parameter kind is accepted and refused the same way everywhere, and
// every refusal names the parameter and the allowed range in plain words
// (never a Go parser message).
//
// Errors wrap ErrInvalid; callers add their own sentinel (400).
package params

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// ErrInvalid is wrapped by every error of this package.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid parameter")

// Limits shared by the groups.
const (
	// MaxDepth caps resolveDepth and resolveReverseDepth; it is also
	// NovaDB's default for both.
	MaxDepth = 100
	// MaxSortKeys caps the number of sort keys of one request.
	MaxSortKeys = 8
)

// Error is a refused parameter. Its message is meant for clients.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err, errkind.Invalid)
// hold.
func (e *Error) Is(target error) bool { return target == ErrInvalid || target == errkind.Invalid }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

// Take is the rule for page sizes: absent (nil) means def; a given value
// must lie within 1..upper (0 is not "the default": it is refused).
func Take(name string, v *int32, def, upper int) (int, error) { return within(name, v, def, 1, upper) }

// Skip is the rule for offsets: 0..upper (upper <= 0: no upper bound).
func Skip(name string, v int64, upper int) (int, error) {
	if v < 0 {
		return 0, errorf("%s must be 0 or more, got %d", name, v)
	}
	if upper > 0 && v > int64(upper) {
		return 0, errorf("%s must be between 0 and %d, got %d", name, upper, v)
	}
	return int(v), nil
}

// Depth is the rule for resolve depths: absent (nil) means def; a given
// value must lie within 0..upper (0 resolves nothing).
func Depth(name string, v *int32, def, upper int) (int, error) { return within(name, v, def, 0, upper) }

// within returns def for an absent v, else *v when it lies within lo..hi.
func within(name string, v *int32, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	if int(*v) < lo || int(*v) > hi {
		return 0, errorf("%s must be between %d and %d, got %d", name, lo, hi, *v)
	}
	return int(*v), nil
}

// Count is the rule for list parameters: at most upper items.
func Count(name string, n, upper int) error {
	if n > upper {
		return errorf("%s takes at most %d entries, got %d", name, upper, n)
	}
	return nil
}

// ID reads a numeric id: plain decimal digits only (no sign, no spaces, no
// leading "+"), at most 2^31-1 (NovaDB ids are int32). ok is false for
// anything else, which callers may then read as an ApiIdentifier or GUID.
func ID(s string) (id int64, ok bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		id = id*10 + int64(s[i]-'0')
	}
	if id > 1<<31-1 {
		return 0, false
	}
	return id, true
}

// IdentifierPathParams are the path parameters that hold an id, GUID or
// ApiIdentifier in some group (as integer fields they would otherwise go
// through Go's number parser, which accepts "+4").
var IdentifierPathParams = []string{"branch", "branch_id", "id", "type", "comment_id", "job_id", "bpo_id", "template_id", "webhook_id"}

// PathIdentifier is the rule for identifier path parameters, checked
// before any conversion: no surrounding spaces and no sign, so "+4" and
// " 4" are never branch 4 (ids are plain digits; GUIDs and ApiIdentifiers
// never start with a sign or a space).
func PathIdentifier(name, v string) error {
	if v == "" {
		return nil
	}
	if v != strings.TrimSpace(v) || v[0] == '+' || v[0] == '-' {
		return errorf("parameter %s: %q is not an identifier: an id is plain digits, else a GUID or an ApiIdentifier", camel(name), v)
	}
	return nil
}

// Wait parses a wait given as whole milliseconds ("250") or a Go duration
// ("2s"), neither negative (X-Cms-Max-Wait); name is how an error names it.
func Wait(name, v string) (time.Duration, error) {
	w := strings.TrimSpace(v)
	if ms, err := strconv.ParseInt(w, 10, 64); err == nil && ms >= 0 && ms <= int64(math.MaxInt64/time.Millisecond) {
		return time.Duration(ms) * time.Millisecond, nil
	}
	if d, err := time.ParseDuration(w); err == nil && d >= 0 {
		return d, nil
	}
	return 0, errorf("%s must be milliseconds or a duration such as 2s, got %q", name, v)
}
