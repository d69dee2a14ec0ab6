package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/cache"
)

// Fences: the highest invalidation version of a tag is the string
// P+"f:"+tag, kept cache.FenceTTL after its last invalidation. SetAt checks
// them and stores in one script, so an InvalidateTagsAt cannot slip between.

func (c *Cache) fenceKey(tag string) string { return c.prefix + "f:" + tag }

var setAtScript = goredis.NewScript(`
local n = tonumber(ARGV[5])
local built = ARGV[4]
for i = n + 2, 2 * n + 1 do
  local f = redis.call('GET', KEYS[i])
  if f and tonumber(f) > tonumber(built) then return 0 end
end
local last = n + 1` + storeLua)

var invalidateAtScript = goredis.NewScript(`
local n = tonumber(ARGV[2])
local v = tonumber(ARGV[1])
for i = n + 1, 2 * n do
  local f = redis.call('GET', KEYS[i])
  if not f or tonumber(f) < v then f = ARGV[1] end
  redis.call('SET', KEYS[i], f, 'PX', tonumber(ARGV[3]))
end
local total = 0
local older = '(' .. ARGV[1]
for i = 1, n do
  local members = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', older)
  for j = 1, #members, 500 do
    redis.call('DEL', unpack(members, j, math.min(j + 499, #members)))
  end
  total = total + #members
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', older)
end
return total
`)

// SetAt implements cache.Cache.
func (c *Cache) SetAt(ctx context.Context, key string, e cache.Entry, tags []string, ttl time.Duration, builtAt int64) (bool, error) {
	if c.closed.Load() {
		return false, cache.ErrClosed
	}
	keys := make([]string, 0, 2*len(tags)+1)
	keys = append(keys, c.entryKey(key))
	for _, t := range tags {
		keys = append(keys, c.tagKey(t))
	}
	for _, t := range tags {
		keys = append(keys, c.fenceKey(t))
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	n, err := setAtScript.Run(ctx, c.rdb, keys, e.Value, e.ETag, strconv.FormatInt(ms, 10),
		strconv.FormatInt(builtAt, 10), strconv.Itoa(len(tags))).Int64()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return false, fmt.Errorf("cache/redis: set: %w", err)
	}
	return n == 1, nil
}

// InvalidateTagsAt implements cache.Cache.
func (c *Cache) InvalidateTagsAt(ctx context.Context, version int64, tags ...string) error {
	if c.closed.Load() {
		return cache.ErrClosed
	}
	if len(tags) == 0 {
		return nil
	}
	keys := make([]string, 0, 2*len(tags))
	for _, t := range tags {
		keys = append(keys, c.tagKey(t))
	}
	for _, t := range tags {
		keys = append(keys, c.fenceKey(t))
	}
	err := invalidateAtScript.Run(ctx, c.rdb, keys, strconv.FormatInt(version, 10), strconv.Itoa(len(tags)),
		strconv.FormatInt(cache.FenceTTL.Milliseconds(), 10)).Err()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("cache/redis: invalidate: %w", err)
	}
	return nil
}
