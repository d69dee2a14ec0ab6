package cache

import "time"

// FenceTTL is how long implementations keep a tag's invalidation version
// (Cache.InvalidateTagsAt) at least. A build that takes longer than this
// could slip past a fence; real builds take milliseconds.
const FenceTTL = time.Hour
