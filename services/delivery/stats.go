package delivery

import "sync/atomic"

// Stats count what the Delivery caches did since the group was built; the
// app exports them as Prometheus counters. HTTP hits never reach gRPC, so
// the per-call metrics do not see them: these do.
type Stats struct {
	// HTTPHits answered 200 and HTTPNotModified 304 from the HTTP cache;
	// HTTPMisses were cacheable requests it passed on.
	HTTPHits, HTTPNotModified, HTTPMisses int64
	// Hits were answered from the response cache behind gRPC, Misses built.
	Hits, Misses int64
	// Invalidations are change events applied to the cache, EvictedTags the
	// tags they evicted.
	Invalidations, EvictedTags int64
}

// counters are the atomic form of Stats.
type counters struct {
	httpHits, httpNotModified, httpMisses, hits, misses, invalidations, evictedTags atomic.Int64
}

// Stats returns the counters.
func (g *Group) Stats() Stats {
	c := &g.api.stats
	return Stats{HTTPHits: c.httpHits.Load(), HTTPNotModified: c.httpNotModified.Load(), HTTPMisses: c.httpMisses.Load(),
		Hits: c.hits.Load(), Misses: c.misses.Load(), Invalidations: c.invalidations.Load(), EvictedTags: c.evictedTags.Load()}
}
