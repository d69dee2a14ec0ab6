package searchtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testInMemorySort checks that the in-memory sort helpers (search.SortValue,
// search.SortByKeys), which readers use for orders the engine has no field
// for, order hits as the engine does: multi-valued fields by their smallest
// value ascending and largest descending, missing values last in both
// directions, ties by id.
func testInMemorySort(t *testing.T, e search.Engine) {
	name := setup(t, e, Products())
	for _, field := range []string{"price", "stock", "category", "tags", "published", "active"} {
		for _, desc := range []bool{false, true} {
			sort := []search.SortField{{Field: field, Desc: desc}}
			res := mustSearch(t, e, search.SearchRequest{Index: name, Sort: sort, Size: 10})
			hits := slices.Clone(res.Hits)
			slices.Reverse(hits) // start from another order
			search.SortByKeys(hits, func(h search.Hit) []any {
				vals, ok := h.Fields[field].([]any)
				if !ok {
					vals = []any{h.Fields[field]}
				}
				return []any{search.SortValue(vals, desc)}
			}, []bool{desc}, func(a, b search.Hit) int { return strings.Compare(a.ID, b.ID) })
			got := make([]string, len(hits))
			for i, h := range hits {
				got[i] = h.ID
			}
			wantIDs(t, "in-memory sort by "+field+map[bool]string{false: " asc", true: " desc"}[desc], got, ids(res))
		}
	}
}
