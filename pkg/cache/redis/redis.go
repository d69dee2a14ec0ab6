// Package redis is the distributed cache.Cache on Redis (go-redis v9), shared
// by all Delivery replicas.
//
// Layout under the instance prefix P: an entry is the hash P+"k:"+key with
// fields v (value) and e (ETag) and the entry's TTL; a tag is the sorted
// set P+"z:"+tag of entry key names scored by the version the entry was
// built at (SetAt; -inf for Set), so InvalidateTagsAt removes just the
// entries built before its version. (Releases before had plain sets under
// P+"t:"; they are no longer read and expire with their entries.) Set and InvalidateTags are Lua scripts, so a
// concurrent Set can never slip between reading a tag set and deleting it. A
// tag set lives at least as long as its longest-lived entry, so expiry never
// drops a membership that an invalidation still needs.
//
// Overwriting a key with other tags leaves it in its old tag sets too; an
// invalidation of an old tag then removes the new entry as well. That errs on
// the safe side (a spurious miss, never a stale hit).
//
// The scripts touch keys they read from sets, so they need a single Redis
// node (or, on a cluster, a prefix with a hash tag such as "{cms}:").
package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/cache"
)

// Cache is a cache.Cache in Redis.
type Cache struct {
	rdb       goredis.UniversalClient
	prefix    string
	ownClient bool
	addr      string // host:port/db, for errors (Open, Dial)
	closed    atomic.Bool
}

var _ cache.Cache = (*Cache)(nil)

// New returns a cache using rdb with every key under prefix. Close does not
// close rdb.
func New(rdb goredis.UniversalClient, prefix string) *Cache {
	return &Cache{rdb: rdb, prefix: prefix}
}

// Open connects to the Redis at url (redis://[user:pass@]host:port/db) and
// checks it answers. Close closes the connection.
func Open(ctx context.Context, url, prefix string) (*Cache, error) {
	c, err := Dial(url, prefix)
	if err != nil {
		return nil, err
	}
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("cache/redis: ping %s: %w", c.addr, err)
	}
	return c, nil
}

// Dial is Open without the check: the client connects on first use, so a
// process can start while Redis is away (its calls fail until it is back).
func Dial(url, prefix string) (*Cache, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("cache/redis: %w", err)
	}
	// Honour the caller's deadline (cache.WithDeadline): without this
	// go-redis waits its own ReadTimeout (3 s) on a frozen server.
	opts.ContextTimeoutEnabled = true
	c := New(goredis.NewClient(opts), prefix)
	c.ownClient = true
	c.addr = fmt.Sprintf("%s/%d", opts.Addr, opts.DB)
	return c, nil
}

func (c *Cache) entryKey(key string) string { return c.prefix + "k:" + key }
func (c *Cache) tagKey(tag string) string   { return c.prefix + "z:" + tag }

// storeLua stores an entry (KEYS[1]: value ARGV[1], ETag ARGV[2], TTL
// ARGV[3] ms) and adds it to the tag sets KEYS[2..last] with the score
// built; a tag set lives as long as its longest-lived entry. The script
// that runs it sets last and built.
const storeLua = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'e', ARGV[2])
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
for i = 2, last do
  local existed = redis.call('EXISTS', KEYS[i])
  redis.call('ZADD', KEYS[i], built, KEYS[1])
  if ttl <= 0 then
    redis.call('PERSIST', KEYS[i])
  elseif existed == 0 then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    local cur = redis.call('PTTL', KEYS[i])
    if cur >= 0 and cur < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
return 1
`

var setScript = goredis.NewScript("local last = #KEYS\nlocal built = '-inf'" + storeLua)

var invalidateScript = goredis.NewScript(`
local n = 0
for i = 1, #KEYS do
  local members = redis.call('ZRANGE', KEYS[i], 0, -1)
  for j = 1, #members, 500 do
    redis.call('DEL', unpack(members, j, math.min(j + 499, #members)))
  end
  n = n + #members
  redis.call('DEL', KEYS[i])
end
return n
`)

// Get implements cache.Cache.
func (c *Cache) Get(ctx context.Context, key string) (cache.Entry, bool, error) {
	if c.closed.Load() {
		return cache.Entry{}, false, cache.ErrClosed
	}
	vals, err := c.rdb.HMGet(ctx, c.entryKey(key), "v", "e").Result()
	if err != nil {
		return cache.Entry{}, false, fmt.Errorf("cache/redis: get: %w", err)
	}
	v, ok := vals[0].(string)
	if !ok {
		return cache.Entry{}, false, nil
	}
	etag, _ := vals[1].(string)
	return cache.Entry{Value: []byte(v), ETag: etag}, true, nil
}

// Set implements cache.Cache.
func (c *Cache) Set(ctx context.Context, key string, e cache.Entry, tags []string, ttl time.Duration) error {
	if c.closed.Load() {
		return cache.ErrClosed
	}
	keys := make([]string, 0, len(tags)+1)
	keys = append(keys, c.entryKey(key))
	for _, t := range tags {
		keys = append(keys, c.tagKey(t))
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	if err := setScript.Run(ctx, c.rdb, keys, e.Value, e.ETag, strconv.FormatInt(ms, 10)).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("cache/redis: set: %w", err)
	}
	return nil
}

// InvalidateTags implements cache.Cache.
func (c *Cache) InvalidateTags(ctx context.Context, tags ...string) error {
	if c.closed.Load() {
		return cache.ErrClosed
	}
	if len(tags) == 0 {
		return nil
	}
	keys := make([]string, len(tags))
	for i, t := range tags {
		keys[i] = c.tagKey(t)
	}
	if err := invalidateScript.Run(ctx, c.rdb, keys).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("cache/redis: invalidate: %w", err)
	}
	return nil
}

// Close closes the connection if Open made it.
func (c *Cache) Close() error {
	if c.closed.Swap(true) {
		return cache.ErrClosed
	}
	if c.ownClient {
		return c.rdb.Close()
	}
	return nil
}

// Ping checks that Redis answers.
func (c *Cache) Ping(ctx context.Context) error {
	return c.rdb.Ping(ctx).Err()
}
