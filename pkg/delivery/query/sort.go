package query

import (
	"fmt"
	"math"
	"strings"

	"github.com/cmsplatform/cms/pkg/params"
)

// SortKey is one key of the `sort` parameter.
type SortKey struct {
	// Field is an attribute id or ApiIdentifier, displayName, a metadata
	// name (meta.<name>) or ScoreKey.
	Field string
	Desc  bool
}

// ScoreKey is the sort key that orders by relevance score.
const ScoreKey = "$score"

// ParseSort parses `displayName, price desc, 1000 asc`: comma-separated
// keys, each optionally followed by asc or desc (case-insensitive). Keys
// sort ascending by default, except $score, which sorts best first
// (descending) unless asc is given.
func ParseSort(s string) ([]SortKey, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if err := params.Count("sort", len(parts), params.MaxSortKeys); err != nil {
		return nil, err
	}
	var keys []SortKey
	for i, part := range parts {
		fields := strings.Fields(part)
		switch {
		case len(fields) == 0:
			return nil, fmt.Errorf("sort: key %d is empty", i+1)
		case len(fields) > 2:
			return nil, fmt.Errorf("sort: key %d %q: want <field> [asc|desc]", i+1, strings.TrimSpace(part))
		}
		k := SortKey{Field: fields[0], Desc: strings.EqualFold(fields[0], ScoreKey)}
		if len(fields) == 2 {
			switch strings.ToLower(fields[1]) {
			case "asc":
				k.Desc = false
			case "desc":
				k.Desc = true
			default:
				return nil, fmt.Errorf("sort: key %d: direction %q is neither asc nor desc", i+1, fields[1])
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Paging limits of Delivery lists.
const (
	DefaultTake = 100
	MaxTake     = 1000
)

// Page validates skip and take by the shared rules (params.Skip,
// params.Take); take 0 means not sent (the default). Transports that know
// whether take was sent call params.Take themselves, so an explicit 0 is
// refused.
func Page(skip, take int64) (int, int, error) {
	sk, err := params.Skip("skip", skip, 0)
	if err != nil {
		return 0, 0, err
	}
	if take < math.MinInt32 || take > math.MaxInt32 {
		return 0, 0, fmt.Errorf("take must be between 1 and %d, got %d", MaxTake, take)
	}
	var v *int32
	if t := int32(take); t != 0 {
		v = &t
	}
	tk, err := params.Take("take", v, DefaultTake, MaxTake)
	return sk, tk, err
}
