package delivery

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
)

// MaxVariants bounds the entries of the variants parameter.
const MaxVariants = 64

// variantCacheSize bounds the resolved identifiers a model keeps.
const variantCacheSize = 1024

// variantCache maps variant identifiers (ids or ApiIdentifiers, as
// written) to object ids for one model, that is for one branch at one
// index version: a changed index loads a new model and so a new cache.
// Only identifiers that resolved are kept.
type variantCache struct {
	mu  sync.Mutex
	ids map[string]int64
}

func newVariantCache() *variantCache { return &variantCache{ids: map[string]int64{}} }

func (c *variantCache) get(ident string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[ident]
	return id, ok
}

func (c *variantCache) put(ident string, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) >= variantCacheSize {
		clear(c.ids)
	}
	c.ids[ident] = id
}

// variantChain resolves the variants parameter: comma-separated variant
// ids or ApiIdentifiers, each naming an object indexed (not deleted) on
// the model's branch. The chain is the listed variants in order (0 and
// repeats dropped), then 0 (values without a variant). An identifier that
// names no object, or an ApiIdentifier naming several, is a 400 naming
// it.
func (s *Service) variantChain(ctx context.Context, m *branchModel, param string) ([]int64, error) {
	var idents []string
	for p := range strings.SplitSeq(param, ",") {
		if p = strings.TrimSpace(p); p != "" {
			idents = append(idents, p)
		}
	}
	if len(idents) > MaxVariants {
		return nil, invalidf("variants: at most %d variants, got %d", MaxVariants, len(idents))
	}
	resolved := make(map[string]int64, len(idents))
	ids := map[string]int64{} // numeric identifiers to look up
	var names []string
	for _, p := range idents {
		if id, ok := m.variants.get(p); ok {
			resolved[p] = id
			continue
		}
		id, err := strconv.ParseInt(p, 10, 64)
		switch {
		case err == nil && id == 0:
			resolved[p] = 0
		case err == nil && id < 0:
			return nil, invalidf("variant %q: ids are not negative", p)
		case err == nil:
			ids[p] = id
		default:
			names = append(names, p)
		}
	}
	if len(ids)+len(names) > 0 {
		if err := s.findVariants(ctx, m, ids, names, resolved); err != nil {
			return nil, err
		}
	}
	chain := make([]int64, 0, len(idents))
	for _, p := range idents {
		id, ok := resolved[p]
		if !ok {
			return nil, invalidf("unknown variant %q on branch %d", p, m.branch)
		}
		chain = append(chain, id)
	}
	return model.VariantChain(chain), nil
}

// findVariants looks ids and ApiIdentifiers up among the objects indexed
// on the model's branch with one search, adding what it finds to resolved
// (and the model's cache).
func (s *Service) findVariants(ctx context.Context, m *branchModel, ids map[string]int64, names []string, resolved map[string]int64) error {
	var which search.Or
	if len(ids) > 0 {
		vals := make([]any, 0, len(ids))
		for _, id := range ids {
			vals = append(vals, id)
		}
		which = append(which, search.Terms{Field: indexdoc.FieldID, Values: vals})
	}
	if len(names) > 0 {
		vals := make([]any, len(names))
		for i, n := range names {
			vals[i] = n
		}
		which = append(which, search.Terms{Field: indexdoc.FieldAPIIdentifier, Values: vals})
	}
	q := search.And{search.Term{Field: indexdoc.FieldBranch, Value: m.branch},
		search.Not{Query: search.Term{Field: indexdoc.FieldDeleted, Value: true}}, which}
	res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: q, Size: 2 * (len(ids) + len(names)),
		Sort: []search.SortField{{Field: indexdoc.FieldID}}})
	if err != nil {
		return s.searchErr(err)
	}
	byName := map[string][]int64{}
	found := map[int64]bool{}
	for _, h := range res.Hits {
		id, _ := h.Fields[indexdoc.FieldID].(int64)
		found[id] = true
		if api, ok := h.Fields[indexdoc.FieldAPIIdentifier].(string); ok && api != "" {
			byName[api] = append(byName[api], id)
		}
	}
	for p, id := range ids {
		if found[id] {
			resolved[p] = id
			m.variants.put(p, id)
		}
	}
	for _, name := range names {
		switch found := byName[name]; len(found) {
		case 0:
		case 1:
			resolved[name] = found[0]
			m.variants.put(name, found[0])
		default:
			return invalidf("variant %q names %d objects", name, len(found))
		}
	}
	if res.Total > int64(len(res.Hits)) { // only an ApiIdentifier naming several objects adds hits
		return invalidf("variants %q: an ApiIdentifier names several objects", strings.Join(names, ","))
	}
	return nil
}
