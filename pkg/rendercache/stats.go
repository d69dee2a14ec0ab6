package rendercache

import "sync/atomic"

// Stats count what the cache did since it was built; the app exports them
// as Prometheus counters.
type Stats struct {
	// Hits were answered from the cache. Misses found no entry; Behind
	// were not looked up because the invalidator had not yet handled the
	// newest change event (or had not started). Stored answers were kept.
	Hits, Misses, Behind, Stored int64
	// Invalidations are change events applied, EvictedTags the tags they
	// evicted.
	Invalidations, EvictedTags int64
}

type counters struct {
	hits, misses, behind, stored, invalidations, evictedTags atomic.Int64
}

// Stats returns the counters (zero for a nil Cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	s := &c.stats
	return Stats{Hits: s.hits.Load(), Misses: s.misses.Load(), Behind: s.behind.Load(), Stored: s.stored.Load(),
		Invalidations: s.invalidations.Load(), EvictedTags: s.evictedTags.Load()}
}
