package stylesheets

import (
	"context"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/rendercache"
)

// WithCache keeps built sheets in c (pkg/rendercache: per process, until
// a change event touches what they read; a write shows in the very next
// request); it returns s. A sheet reads no caller-dependent data (no
// user objects are filtered), so its key is the sheet and the branch.
func (s *Service) WithCache(c *rendercache.Cache) *Service {
	s.cache = c
	return s
}

// cached answers key from the cache when it is current, else builds it
// and stores it with the tags build returns (nil: not stored;
// rendercache.Cache.GetOrBuild).
func (s *Service) cached(ctx context.Context, key string, build func() (Sheet, []string, error)) (Sheet, error) {
	e, err := s.cache.GetOrBuild(ctx, key, func() (rendercache.Entry, []string, error) {
		sh, tags, err := build()
		return rendercache.Entry{Body: sh.CSS, ETag: sh.ETag}, tags, err
	})
	return Sheet{CSS: e.Body, ETag: e.ETag}, err
}

// listTags are the tags of a sheet that lists the objects of types: the
// types (a new object of one), the type objects themselves, and the branch
// tree (which chain the branch inherits from).
func listTags(types ...int64) []string {
	tags := []string{rendercache.TypeTag(content.TypeBranch)}
	for _, t := range types {
		tags = append(tags, rendercache.TypeTag(t), rendercache.ObjectTag(t))
	}
	return tags
}
