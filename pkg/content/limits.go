package content

import (
	"errors"
	"fmt"
)

// ErrTooLarge means a value, or the values of one request together, exceed the
// configured ValueLimits. Management answers 413 with the attribute and the
// limit in the detail.
var ErrTooLarge = errors.New("too large")

// Defaults of ValueLimits.
const (
	// DefaultMaxValueBytes caps one value's JSON (1 MiB).
	DefaultMaxValueBytes = 1 << 20
	// DefaultMaxRequestValueBytes caps the JSON of all values of one
	// write request together (16 MiB).
	DefaultMaxRequestValueBytes = 16 << 20
)

// ValueLimits caps what one write may store. A value's size is the length
// of its JSON as sent (a string value counts its quotes and escapes).
// Every Management write of values (CreateObjects, UpdateObjects,
// CreateBranch, UpdateBranch) checks them before it opens its transaction;
// comment bodies have their own cap (MaxCommentBodyBytes).
type ValueLimits struct {
	// MaxValueBytes caps one value; <= 0 = DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxRequestValueBytes caps the sum over a request; <= 0 =
	// DefaultMaxRequestValueBytes.
	MaxRequestValueBytes int
}

// WithValueLimits sets the limits of value writes (zero fields keep their
// defaults).
func WithValueLimits(l ValueLimits) Option {
	return func(s *Service) { s.limits = l }
}

func (l ValueLimits) withDefaults() ValueLimits {
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultMaxValueBytes
	}
	if l.MaxRequestValueBytes <= 0 {
		l.MaxRequestValueBytes = DefaultMaxRequestValueBytes
	}
	return l
}

// check returns ErrTooLarge naming the first value over MaxValueBytes, or
// the request when the values together exceed MaxRequestValueBytes.
func (l ValueLimits) check(inputs ...[]ValueInput) error {
	l = l.withDefaults()
	total := 0
	for i, vals := range inputs {
		for _, v := range vals {
			if n := len(v.JSON); n > l.MaxValueBytes {
				return fmt.Errorf("%w: objects[%d]: the value of attribute %d (language %d, variant %d) has %d bytes, the limit is %d bytes per value",
					ErrTooLarge, i, v.Attribute, v.Language, v.Variant, n, l.MaxValueBytes)
			}
			total += len(v.JSON)
		}
	}
	if total > l.MaxRequestValueBytes {
		return fmt.Errorf("%w: the values of the request have %d bytes together, the limit is %d bytes per request",
			ErrTooLarge, total, l.MaxRequestValueBytes)
	}
	return nil
}

// checkObjects is check over the values of in.
func (l ValueLimits) checkObjects(in []ObjectInput) error {
	inputs := make([][]ValueInput, len(in))
	for i, o := range in {
		inputs[i] = o.Values
	}
	return l.check(inputs...)
}
