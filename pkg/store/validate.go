package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// The helpers below hold the argument checks every implementation shares, so
// the backends reject exactly the same input.

// CheckObjects returns ErrInvalidArgument for an object without GUID or
// with a negative id.
func CheckObjects(objs []Object) error {
	for _, o := range objs {
		if o.GUID == "" {
			return fmt.Errorf("%w: object %d on branch %d has no GUID", ErrInvalidArgument, o.ID, o.Branch)
		}
		if o.ID <= 0 {
			return fmt.Errorf("%w: object id %d must be positive", ErrInvalidArgument, o.ID)
		}
	}
	return nil
}

// NormalizeValues checks the JSON of each value and returns the JSON to
// store per value (nil becomes "null").
func NormalizeValues(values []Value) ([][]byte, error) {
	out := make([][]byte, len(values))
	for i, v := range values {
		j := v.JSON
		if j == nil {
			j = []byte("null")
		}
		if !json.Valid(j) {
			return nil, fmt.Errorf("%w: value of object %d attribute %d is not valid JSON", ErrInvalidArgument, v.ObjectID, v.AttributeID)
		}
		out[i] = j
	}
	return out, nil
}

// TxTime returns the transaction time for meta: meta.Time or now(), in UTC,
// truncated to microseconds (the precision both databases keep).
func TxTime(meta TxMeta, now func() time.Time) time.Time {
	t := meta.Time
	if t.IsZero() {
		t = now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// MaxID returns the largest object id in objs (0 for none).
func MaxID(objs []Object) int64 {
	var m int64
	for _, o := range objs {
		m = max(m, o.ID)
	}
	return m
}
