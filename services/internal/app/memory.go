package app

import "github.com/cmsplatform/cms/pkg/memlimit"

// The shares of the memory budget (Config.MemoryLimit) the in-memory
// caches of a process take: each holds at most budget/share bytes
// (README "Memory").
const (
	// cacheShare: the memory cache component (Delivery's answers,
	// pkg/responsecache, both layers).
	cacheShare = 16
	// docCacheShare: Bleve's decoded documents, per index.
	docCacheShare = 16
	// sourceCacheShare: Delivery's decoded stored sources (pkg/delivery).
	sourceCacheShare = 32
	// renderCacheShare: the render cache, at most (renderCacheMaxBytes
	// bounds it further).
	renderCacheShare = 16
	// credentialsShare: authenticated Basic credentials (pkg/auth.Cached).
	credentialsShare = 256
	// natsMemoryShare: the embedded NATS server's JetStream memory storage.
	natsMemoryShare = 16
	// columnsShare: the column index of one embedded search index
	// (searchColumnsMaxBytes replaces it when set).
	columnsShare = 4
)

// memory is the budget of this process.
func (c Config) memory() memlimit.Budget { return memlimit.Of(c.MemoryLimit) }

// renderCacheBytes is the render cache's bound: renderCacheMaxBytes, at
// most its share of the budget (0: off).
func (c Config) renderCacheBytes() int64 {
	if c.RenderCacheMaxBytes <= 0 {
		return 0
	}
	return min(c.RenderCacheMaxBytes, c.memory().Share(renderCacheShare))
}

// searchColumnsBytes is the column budget of one embedded search index:
// searchColumnsMaxBytes, else its share of the budget.
func (c Config) searchColumnsBytes() int64 {
	if c.SearchColumnsMaxBytes > 0 {
		return c.SearchColumnsMaxBytes
	}
	return c.memory().Share(columnsShare)
}
