package bleve

import (
	"maps"
	"slices"
	"sync"
)

// docCacheSize bounds the decoded documents kept per index.
const docCacheSize = 4096

// docCache keeps decoded stored sources by document id and version, so a
// document read again (a list page, the targets of references) is not
// parsed from JSON again. A document never changes under one version
// (Bulk refuses ops whose version is not newer), so the version is the
// validity check; entries of older versions are simply replaced. Callers
// get their own map; multi-valued fields share the cached backing array
// but are clipped, so appending to one reallocates (no caller writes
// elements in place; copying them cost more than the cache saved).
type docCache struct {
	mu sync.Mutex
	m  map[string]cachedDoc
}

type cachedDoc struct {
	ver    int64
	fields map[string]any
}

func newDocCache() *docCache { return &docCache{m: make(map[string]cachedDoc)} }

// get returns a copy of the fields of id at version ver, if cached: all
// of them when names is nil, else only those named.
func (c *docCache) get(id string, ver int64, names []string) (map[string]any, bool) {
	c.mu.Lock()
	d, ok := c.m[id]
	c.mu.Unlock()
	if !ok || d.ver != ver {
		return nil, false
	}
	if names != nil {
		return selectFields(d.fields, names), true
	}
	// The cached slices are clipped already (put), so a plain clone is
	// what copyFields would build, for a fraction of the cost.
	return maps.Clone(d.fields), true
}

// selectFields returns a new map with the fields of f named in names.
// Slices are shared as they are: callers pass maps whose slices are
// clipped (cached ones, or ones put has clipped).
func selectFields(f map[string]any, names []string) map[string]any {
	out := make(map[string]any, len(names))
	for _, n := range names {
		if v, ok := f[n]; ok {
			out[n] = v
		}
	}
	return out
}

// drop forgets id.
func (c *docCache) drop(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// put keeps a copy of fields as id at version ver. When full it drops an
// arbitrary quarter of the entries (map order), which is cheap and good
// enough for a cache whose misses only cost a decode.
func (c *docCache) put(id string, ver int64, fields map[string]any) {
	cp := copyFields(fields)
	for k, v := range fields { // the caller keeps fields: clip its slices too
		if vals, ok := v.([]any); ok {
			fields[k] = slices.Clip(vals)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= docCacheSize {
		n := docCacheSize / 4
		for k := range c.m {
			delete(c.m, k)
			if n--; n == 0 {
				break
			}
		}
	}
	c.m[id] = cachedDoc{ver: ver, fields: cp}
}

// copyFields copies the map of normalised fields: scalars are immutable
// values, multi-valued fields flat []any slices, clipped to their length.
func copyFields(f map[string]any) map[string]any {
	out := make(map[string]any, len(f))
	for k, v := range f {
		if vals, ok := v.([]any); ok {
			v = slices.Clip(vals)
		}
		out[k] = v
	}
	return out
}
