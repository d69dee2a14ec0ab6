package rendercache

import "github.com/cmsplatform/cms/pkg/tagcache"

// Stats count what the cache did since it was built; the app exports them
// as Prometheus counters.
type Stats struct {
	// Hits were answered from the cache, Misses found no entry, Stored
	// answers were kept; Invalidations are change events applied,
	// EvictedTags the tags they evicted (tagcache.Stats).
	tagcache.Stats
	// Behind were not looked up because the invalidator had not yet
	// handled the newest change event (or had not started).
	Behind int64
}

// Stats returns the counters (zero for a nil Cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	return Stats{Stats: c.store.Stats(), Behind: c.behind.Load()}
}
