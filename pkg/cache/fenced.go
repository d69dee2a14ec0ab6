package cache

import (
	"context"
	"time"
)

// Fenced is a Cache that closes the race described in the package doc
// with versions: a reader notes the data version it builds from (e.g. the
// search index's change-tracking version read before the first query),
// an invalidator tells which version made the tags stale, and an entry
// built from data older than an invalidation of one of its tags is never
// stored. Both implementations (memory, redis) provide it; cachetest.RunFenced
// is its suite.
type Fenced interface {
	Cache
	// SetAt is Set for an entry built from data at version builtAt. It
	// stores nothing and reports false when one of tags was invalidated
	// at a version > builtAt. Check and store are atomic with respect to
	// InvalidateTagsAt.
	SetAt(ctx context.Context, key string, e Entry, tags []string, ttl time.Duration, builtAt int64) (stored bool, err error)
	// InvalidateTagsAt is InvalidateTags that also remembers, per tag, the
	// highest version that invalidated it. Implementations may forget
	// these fences after a while (FenceTTL) or raise a global floor
	// instead (memory), never lower one.
	InvalidateTagsAt(ctx context.Context, version int64, tags ...string) error
}

// FenceTTL is how long implementations keep a tag's invalidation version
// at least. A build that takes longer than this could slip past a fence;
// real builds take milliseconds.
const FenceTTL = time.Hour
