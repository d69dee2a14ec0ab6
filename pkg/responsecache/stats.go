package responsecache

import "sync/atomic"

// Stats count what the response cache did since it was built; the app
// exports them as Prometheus counters. HTTP hits never reach gRPC, so the
// per-call metrics do not see them: these do.
type Stats struct {
	// HTTPHits answered 200 and HTTPNotModified 304 from the HTTP layer;
	// HTTPMisses were admitted requests it passed on.
	HTTPHits, HTTPNotModified, HTTPMisses int64
	// Hits were answered from the cache by Serve, Misses were not. Shared
	// counts the misses answered by an identical concurrent build instead
	// of their own.
	Hits, Misses, Shared int64
	// Invalidations are change events applied to the cache, EvictedTags the
	// tags they evicted.
	Invalidations, EvictedTags int64
}

// counters are the atomic form of Stats.
type counters struct {
	httpHits, httpNotModified, httpMisses, hits, misses, shared, invalidations, evictedTags atomic.Int64
}

// Stats returns the counters (zero for a nil Cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	s := &c.stats
	return Stats{HTTPHits: s.httpHits.Load(), HTTPNotModified: s.httpNotModified.Load(), HTTPMisses: s.httpMisses.Load(),
		Hits: s.hits.Load(), Misses: s.misses.Load(), Shared: s.shared.Load(),
		Invalidations: s.invalidations.Load(), EvictedTags: s.evictedTags.Load()}
}
