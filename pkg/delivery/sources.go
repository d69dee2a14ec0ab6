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

// get returns the cached Source of document id at version.
func (c *sourceCache) get(id string, version int64) (indexdoc.Source, bool) {
	if version <= 0 {
		return indexdoc.Source{}, false
	}
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	return e.src, ok && e.version == version
}

// decode returns the Source of a hit, from the cache when the version
// matches.
func (c *sourceCache) decode(id string, version int64, fields map[string]any) (indexdoc.Source, error) {
	if src, ok := c.get(id, version); ok {
		return src, nil
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

// sourceHits reads the hits of one search through their sources: the
// engine returns the stored source alone and, where it learns a hit's
// version first, not even that for a version the cache holds
// (search.SearchRequest.Held), which spares reading and decoding the
// stored document of most resolved references and list pages. The sources
// held are kept for the search's hits (held), so an entry evicted in
// between does not lose one.
type sourceHits struct {
	cache *sourceCache
	size  int // the search's page size
	// held in the order the engine asked for them, which is usually the
	// hits' order: next is where the next hit is looked for first.
	held []heldSource
	next int
}

type heldSource struct {
	id  string
	src indexdoc.Source
}

// sourceSearch returns req asking for the sources only, with the hits it
// answers read through the returned sourceHits.
func (s *Service) sourceSearch(req search.SearchRequest) (search.SearchRequest, *sourceHits) {
	hs := &sourceHits{cache: s.sources, size: req.Size}
	req.Fields = sourceField
	req.Held = hs.holds
	return req, hs
}

// sourceField is the field selection of sourceSearch, shared by every
// request (engines only read it).
var sourceField = []string{indexdoc.FieldSource}

// holds is the search's Held: it keeps the cached source of id at version.
func (hs *sourceHits) holds(id string, version int64) bool {
	src, ok := hs.cache.get(id, version)
	if ok {
		if hs.held == nil {
			hs.held = make([]heldSource, 0, min(max(hs.size, 1), 64))
		}
		hs.held = append(hs.held, heldSource{id: id, src: src})
	}
	return ok
}

// source returns the Source of a hit of the search.
func (hs *sourceHits) source(h search.Hit) (indexdoc.Source, error) {
	if h.Fields == nil {
		for i := range hs.held {
			j := (hs.next + i) % len(hs.held)
			if hs.held[j].id == h.ID {
				hs.next = j + 1
				return hs.held[j].src, nil
			}
		}
	}
	return hs.cache.decode(h.ID, h.Version, h.Fields)
}
