package delivery

import (
	"context"
	"sync"

	"github.com/cmsplatform/cms/pkg/search"
)

// One version per request. An uncached read used to read the index's
// change-tracking version three times (the response cache's fence, the
// branch model, the branch lookup) and to look the branch up in the
// index each time: four engine calls of which one was the query. Within
// OneVersion the version is read once and the branch's id is looked up
// once per index version, so the read costs two: the version and the
// query. OneRead adds one deadline for the calls of the read.

// versionMemo is the version one request read (set once read).
type versionMemo struct {
	once sync.Once
	v    int64
	err  error
}

type versionMemoKey struct{}

// OneVersion returns ctx in which Version reads the index version once
// and then answers what it read: every read of one request (the response
// cache's fence, the branch model, the branch lookup) sees one version.
// A caller that waits for a version (WaitForVisible) does so before.
func OneVersion(ctx context.Context) context.Context {
	if _, ok := ctx.Value(versionMemoKey{}).(*versionMemo); ok {
		return ctx
	}
	return context.WithValue(ctx, versionMemoKey{}, &versionMemo{})
}

// OneRead returns the context of one read (a request): the index version
// read once (OneVersion), and one deadline of the engine for all the
// read's calls (search.Budget: one timer per read, not one per call).
// Cancel it when the read is done.
func (s *Service) OneRead(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := search.Budget(ctx, s.eng)
	return OneVersion(ctx), cancel
}

// Version returns the index's change-tracking version (0 before the first
// indexed change): every response is a function of it and the request.
// Within OneVersion it is read once.
func (s *Service) Version(ctx context.Context) (int64, error) {
	m, ok := ctx.Value(versionMemoKey{}).(*versionMemo)
	if !ok {
		return s.tracking.Version(ctx)
	}
	m.once.Do(func() { m.v, m.err = s.tracking.Version(ctx) })
	return m.v, m.err
}

// maxBranchIDs bounds the branch identifiers whose ids are kept for one
// version (the branches a site reads are few; a caller sending random
// identifiers only clears the map).
const maxBranchIDs = 1024

// branchIDs are the ids branch identifiers resolved to at one index
// version: the branch objects, their ApiIdentifiers and the alias
// "draft" only change with the version.
type branchIDs struct {
	mu      sync.Mutex
	version int64
	ids     map[string]int64
}

// get returns the id param resolved to at version.
func (b *branchIDs) get(version int64, param string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.version != version {
		return 0, false
	}
	id, ok := b.ids[param]
	return id, ok
}

// put records that param resolved to id at version; an older version's
// ids are dropped.
func (b *branchIDs) put(version int64, param string, id int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if version < b.version {
		return
	}
	if version != b.version || b.ids == nil || len(b.ids) >= maxBranchIDs {
		b.version, b.ids = version, make(map[string]int64, 4)
	}
	b.ids[param] = id
}
