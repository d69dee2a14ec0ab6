package bleve

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// DefaultDocCacheBytes bounds the memory of the decoded documents kept
// per index (docCost) unless WithDocCacheBytes says otherwise: 32 MiB
// hold about 5,000 documents of a few dozen fields (an article with an
// author and five tags costs about 6 KiB decoded), the working set of
// list pages and resolved references of a typical site.
const DefaultDocCacheBytes = 32 << 20

// docCache keeps decoded stored sources by document id and version, so a
// document read again (a list page, the targets of references) is not
// parsed from JSON again. A document never changes under one version
// (Bulk refuses ops whose version is not newer), so the version is the
// validity check; entries of older versions are simply replaced. Callers
// get their own map; multi-valued fields share the cached backing array
// but are clipped, so appending to one reallocates (no caller writes
// elements in place; copying them cost more than the cache saved).
type docCache struct {
	mu    sync.Mutex
	m     map[string]cachedDoc
	bytes int64 // sum of the entries' costs
	limit int64
}

type cachedDoc struct {
	ver    int64
	cost   int64
	fields map[string]any
}

func newDocCacheOf(limit int64) *docCache {
	return &docCache{m: make(map[string]cachedDoc), limit: limit}
}

// docCost is the memory a decoded document holds in the cache: its map
// (header, and per field a slot holding key and interface), the keys,
// and each value with what it points to (TestDocCostIsTheHeap compares
// it with the heap). srcLen, the stored source's length, is the floor:
// the decoded values come from it.
func docCost(srcLen int, fields map[string]any) int64 {
	n := int64(mapHeader)
	for k, v := range fields {
		n += mapSlot + int64(len(k)) + valueCost(v)
	}
	return max(n, int64(srcLen))
}

// entryCost is what the cache's own map spends on the entry of id: the
// key's header and bytes, the cachedDoc, and its share of the map's slot
// and control bytes (a map grown by a burst keeps its size: a bounded
// cache with churn holds more slots than entries).
func entryCost(id string) int64 { return int64(len(id)) + 16 + 24 + 24 }

// What the runtime allocates for a map and for boxed values: a map's
// header and groups (amortised per slot: key and value of 16 bytes each,
// a control byte, load factor 7/8), a string's header and bytes, a
// number's eight bytes, a slice's header and elements.
const (
	mapHeader = 48
	mapSlot   = 40
	boxed     = 16
)

// valueCost is the heap a normalised field value holds behind its
// interface.
func valueCost(v any) int64 {
	switch x := v.(type) {
	case string:
		return boxed + int64(len(x))
	case float64, int64, int:
		return 8
	case bool, nil:
		return 0
	case time.Time:
		return 24
	case []string:
		n := int64(24 + boxed*cap(x))
		for _, e := range x {
			n += int64(len(e))
		}
		return n
	case []any:
		n := int64(24 + boxed*cap(x))
		for _, e := range x {
			n += valueCost(e)
		}
		return n
	case map[string]any:
		n := int64(mapHeader)
		for k, e := range x {
			n += mapSlot + int64(len(k)) + valueCost(e)
		}
		return n
	}
	return 64
}

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
	c.bytes -= c.m[id].cost
	delete(c.m, id)
	c.mu.Unlock()
}

// put keeps a copy of fields as id at version ver, decoded from srcLen
// bytes of source. When over its limit it drops arbitrary entries (map
// order) until a quarter of the limit is free, which is cheap and good
// enough for a cache whose misses only cost a decode.
func (c *docCache) put(id string, ver int64, fields map[string]any, srcLen int) {
	cp := copyFields(fields)
	for k, v := range fields { // the caller keeps fields: clip its slices too
		if vals, ok := v.([]any); ok {
			fields[k] = slices.Clip(vals)
		}
	}
	cost := docCost(srcLen, cp) + entryCost(id)
	if cost > c.limit/4 {
		return // one huge document would evict a quarter of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[id]; ok { // replaced: out before evicting, counted once
		c.bytes -= old.cost
		delete(c.m, id)
	}
	if c.bytes+cost > c.limit {
		for k, d := range c.m {
			if c.bytes+cost <= c.limit*3/4 {
				break
			}
			delete(c.m, k)
			c.bytes -= d.cost
		}
	}
	c.m[id] = cachedDoc{ver: ver, cost: cost, fields: cp}
	c.bytes += cost
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
