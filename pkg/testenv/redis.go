package testenv

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DeleteRedisKeys deletes every Redis key named prefix*. Failures are
// logged, not fatal: it cleans up after a test.
func DeleteRedisKeys(t testing.TB, redisURL, prefix string) {
	opts, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Logf("cleanup: Redis keys %s*: %v", prefix, err)
		return
	}
	rdb := goredis.NewClient(opts)
	defer func() { _ = rdb.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for it.Next(ctx) {
		if err := rdb.Del(ctx, it.Val()).Err(); err != nil {
			t.Logf("cleanup: delete Redis key %s: %v", it.Val(), err)
		}
	}
	if err := it.Err(); err != nil {
		t.Logf("cleanup: list Redis keys %s*: %v", prefix, err)
	}
}
