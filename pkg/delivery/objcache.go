package delivery

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// objectCache keeps objects as a view rendered them, so that an object
// read again in the same way (a popular reference: the author or the tags
// of many articles) is neither rendered nor hashed for its ETag again.
//
// An entry is keyed by the decoded source it was rendered from, the model
// and the view. The source is named by its Values array: decoded sources
// are kept and shared by the source cache (sourceCache, by document id and
// version) and never modified, so the same array is the same decoded
// document version, and the key keeps it alive (it cannot be reused for
// another one). The model is named by its branch and index version (a
// model is loaded once per both), the view by viewKey. Cached objects are
// shared, like the sources: their Props, DisplayIcon and Reverse must not
// be modified (callers set a copy's Reverse and ETag, never write into
// them). Rendering is a function of the three, so a hit is exactly what
// rendering would return.
//
// When it is full, it drops first the entries not read since it last
// was (an object rendered once, such as each article of a catalogue read
// by random id, gives way to the references read again and again).
type objectCache struct {
	mu    sync.Mutex
	m     map[renderKey]*cachedRender
	bytes int64 // the entries' cost
	limit int64
}

type renderKey struct {
	vals *indexdoc.SourceValue // &Values[0] of the source
	n    int                   // len(Values)
	id   int64
	// The model: its branch and index version.
	branch, version int64
	view            string // viewKey
}

type cachedRender struct {
	obj  Object
	cost int64
	used atomic.Bool // read since the last eviction
	// The rest of the source, compared on a hit (a copy of a source with
	// other header fields would share its Values).
	guid, api          string
	typeRef, tx        int64
	modified           int64
	deleted, zeroMtime bool
}

func newObjectCache(limit int64) *objectCache {
	return &objectCache{m: make(map[renderKey]*cachedRender), limit: limit}
}

// renderOverhead is what a cached rendering holds beyond twice its
// source's cost (sourceCost: the source it keeps alive, and about as much
// again for the props rendered from it): its map slot, record and props
// map.
const renderOverhead = 256

// key returns the key of src rendered by v; ok is false for a source that
// is not cached (no values to name it by, or no cache).
func (c *objectCache) key(v *view, src *indexdoc.Source) (renderKey, bool) {
	if c == nil || len(src.Values) == 0 || v.key == "" {
		return renderKey{}, false
	}
	return renderKey{vals: &src.Values[0], n: len(src.Values), id: src.ID, branch: v.m.branch, version: v.m.version, view: v.key}, true
}

// get returns the cached rendering of src under k.
func (c *objectCache) get(k renderKey, src *indexdoc.Source) (Object, bool) {
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if !ok || e.guid != src.GUID || e.api != src.APIIdentifier || e.typeRef != src.TypeRef || e.tx != src.LastTransaction ||
		e.deleted != src.Deleted || e.zeroMtime != src.Modified.IsZero() || e.modified != src.Modified.UnixNano() {
		return Object{}, false
	}
	if !e.used.Load() {
		e.used.Store(true)
	}
	return e.obj, true
}

// put keeps o, the rendering of src under k.
func (c *objectCache) put(k renderKey, src *indexdoc.Source, o Object) {
	cost := renderOverhead + 2*sourceCost("", *src)
	if cost > c.limit/4 {
		return
	}
	e := &cachedRender{guid: src.GUID, api: src.APIIdentifier, typeRef: src.TypeRef, tx: src.LastTransaction,
		deleted: src.Deleted, modified: src.Modified.UnixNano(), zeroMtime: src.Modified.IsZero(), obj: o, cost: cost}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.bytes -= old.cost
	}
	if c.bytes+cost > c.limit {
		c.evict(c.limit*3/4 - cost)
	}
	c.m[k] = e
	c.bytes += cost
}

// evict drops entries until the cache holds at most target bytes: first
// those not read since the last eviction (the others are marked unread,
// so they go next time unless read again), then any (map order).
func (c *objectCache) evict(target int64) {
	for _, all := range []bool{false, true} {
		for key, e := range c.m {
			if c.bytes <= target {
				return
			}
			if !all && e.used.Swap(false) {
				continue
			}
			delete(c.m, key)
			c.bytes -= e.cost
		}
	}
}

// viewKey names what of a view besides its model a rendering depends on:
// the language and variant chains, the props mode and units.
func viewKey(v *view) string {
	var buf [64]byte
	b := append(buf[:0], 'l')
	for _, l := range v.langs {
		b = strconv.AppendInt(append(b, ','), l, 10)
	}
	b = append(b, ';', 'v')
	for _, va := range v.variants {
		b = strconv.AppendInt(append(b, ','), va, 10)
	}
	b = append(b, ';', 'p')
	b = strconv.AppendInt(b, int64(v.props), 10)
	if v.units {
		b = append(b, ";u"...)
	}
	return string(b)
}
