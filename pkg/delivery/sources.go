package delivery

import (
	"sync"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// DefaultSourceCacheBytes bounds the memory of the decoded sources a
// Service keeps (sourceCost each) unless Options.SourceCacheBytes says
// otherwise.
const DefaultSourceCacheBytes = 16 << 20

// sourceCache keeps decoded indexwriter.Sources by document id and version:
// the indexer writes a document with a new version whenever it changes,
// so a (id, version) pair always decodes to the same Source. It saves the
// JSON decode of FieldSource for objects read again (pages, refs). Cached
// Sources are shared: their Values must not be modified (rendering only
// reads them).
type sourceCache struct {
	mu    sync.Mutex
	m     map[string]cachedSource
	bytes int64 // the entries' sourceCost
	limit int64
}

type cachedSource struct {
	version int64
	cost    int64
	src     indexdoc.Source
}

func newSourceCache(limit int64) *sourceCache {
	return &sourceCache{m: make(map[string]cachedSource), limit: limit}
}

// What a cached source holds beyond its strings and raw values: its map
// slot and record (with the id key), and per value row its record.
const (
	sourceOverhead      = 384
	sourceValueOverhead = 176
)

// sourceCost is the memory one cached source holds.
func sourceCost(id string, s indexdoc.Source) int64 {
	n := int64(sourceOverhead + len(id) + len(s.GUID) + len(s.APIIdentifier))
	for _, v := range s.Values {
		n += int64(sourceValueOverhead + len(v.DataType) + cap(v.Value))
	}
	return n
}

// decode returns the Source of a hit, from the cache when the version
// matches.
func (c *sourceCache) decode(id string, version int64, fields map[string]any) (indexdoc.Source, error) {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && e.version == version && version > 0 {
		return e.src, nil
	}
	src, err := indexdoc.DecodeSource(fields)
	if err != nil || version <= 0 {
		return src, err
	}
	cost := sourceCost(id, src)
	if cost > c.limit/4 {
		return src, nil // one huge source would evict a quarter of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[id]; ok {
		c.bytes -= old.cost
		delete(c.m, id)
	}
	if c.bytes+cost > c.limit {
		for k, e := range c.m { // drop arbitrary entries (map order) until a quarter is free
			if c.bytes+cost <= c.limit*3/4 {
				break
			}
			delete(c.m, k)
			c.bytes -= e.cost
		}
	}
	c.m[id] = cachedSource{version: version, cost: cost, src: src}
	c.bytes += cost
	return src, nil
}

// hitSource decodes the Source of a search hit.
func (s *Service) hitSource(h search.Hit) (indexdoc.Source, error) {
	return s.sources.decode(h.ID, h.Version, h.Fields)
}

// sourceOnly is the field selection (search.SearchRequest.Fields) for
// searches whose hits are only read through hitSource: the engine then
// returns the stored source alone instead of copying every field.
func sourceOnly() []string { return []string{indexdoc.FieldSource} }
