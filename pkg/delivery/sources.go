package delivery

import (
	"sync"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// sourceCacheSize bounds the decoded sources a Service keeps.
const sourceCacheSize = 4096

// sourceCache keeps decoded indexwriter.Sources by document id and version:
// the indexer writes a document with a new version whenever it changes,
// so a (id, version) pair always decodes to the same Source. It saves the
// JSON decode of FieldSource for objects read again (pages, refs). Cached
// Sources are shared: their Values must not be modified (rendering only
// reads them).
type sourceCache struct {
	mu sync.Mutex
	m  map[string]cachedSource
}

type cachedSource struct {
	version int64
	src     indexdoc.Source
}

func newSourceCache() *sourceCache { return &sourceCache{m: make(map[string]cachedSource)} }

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
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= sourceCacheSize {
		n := sourceCacheSize / 4 // drop an arbitrary quarter (map order)
		for k := range c.m {
			delete(c.m, k)
			if n--; n == 0 {
				break
			}
		}
	}
	c.m[id] = cachedSource{version: version, src: src}
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
