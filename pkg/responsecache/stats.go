package responsecache

import (
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/tagcache"
)

// Stats count what the response cache did since it was built; the app
// exports them as Prometheus counters. HTTP hits never reach gRPC, so the
// per-call metrics do not see them: these do.
type Stats struct {
	// Hits were answered from the cache by Serve, Misses were not;
	// Invalidations are change events applied to the cache, EvictedTags
	// the tags they evicted (tagcache.Stats).
	tagcache.Stats
	// HTTPHits answered 200 and HTTPNotModified 304 from the HTTP layer;
	// HTTPMisses were admitted requests it passed on.
	HTTPHits, HTTPNotModified, HTTPMisses int64
	// Shared counts the misses answered by an identical concurrent build
	// instead of their own.
	Shared int64
}

// counters are the atomic form of the Stats of this package.
type counters struct {
	httpHits, httpNotModified, httpMisses, shared atomic.Int64
}

// Stats returns the counters (zero for a nil Cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	s := &c.stats
	return Stats{Stats: c.store.Stats(), HTTPHits: s.httpHits.Load(), HTTPNotModified: s.httpNotModified.Load(),
		HTTPMisses: s.httpMisses.Load(), Shared: s.shared.Load()}
}
