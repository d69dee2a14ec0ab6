package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/cachetest"
	"github.com/cmsplatform/cms/pkg/cache/redis"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// newCache returns a cache with a key prefix unique to t; all its keys are
// deleted when t ends.
func newCache(t *testing.T) (*redis.Cache, *goredis.Client, string) {
	url := testenv.URL(t, testenv.RedisURL)
	opts, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opts)
	prefix := fmt.Sprintf("cmstest:%d:", time.Now().UnixNano())
	c := redis.New(rdb, prefix)
	t.Cleanup(func() {
		_ = c.Close()
		testenv.DeleteRedisKeys(t, url, prefix)
		_ = rdb.Close()
	})
	return c, rdb, prefix
}

func TestConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Cache {
		c, _, _ := newCache(t)
		return c
	})
}

// TestTagSetsOutliveEntries checks the invariant the package doc promises:
// a tag set expires no earlier than its longest-lived entry, and invalidation
// removes the tag set itself.
func TestTagSetsOutliveEntries(t *testing.T) {
	ctx := context.Background()
	c, rdb, prefix := newCache(t)
	_ = c.Set(ctx, "long", cache.Entry{Value: []byte("l")}, []string{"t"}, time.Hour)
	_ = c.Set(ctx, "short", cache.Entry{Value: []byte("s")}, []string{"t"}, time.Minute)
	if ttl := rdb.PTTL(ctx, prefix+"z:t").Val(); ttl < 59*time.Minute {
		t.Errorf("tag set TTL = %v, want about an hour", ttl)
	}
	_ = c.Set(ctx, "forever", cache.Entry{Value: []byte("f")}, []string{"t"}, 0)
	if ttl := rdb.PTTL(ctx, prefix+"z:t").Val(); ttl != -1 {
		t.Errorf("tag set TTL with a non-expiring entry = %v, want none (-1)", ttl)
	}
	if err := c.InvalidateTags(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, prefix+"z:t", prefix+"k:long", prefix+"k:short", prefix+"k:forever").Val(); n != 0 {
		t.Errorf("%d keys left after invalidation", n)
	}
}

func TestOpen(t *testing.T) {
	url := testenv.URL(t, testenv.RedisURL)
	c, err := redis.Open(context.Background(), url, fmt.Sprintf("cmstest:%d:", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(context.Background(), "k"); err != cache.ErrClosed {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if _, err := redis.Open(context.Background(), "redis://127.0.0.1:1/0", "x:"); err == nil {
		t.Error("Open of a closed port succeeded")
	}
}

func BenchmarkGetHit(b *testing.B) {
	url := testenv.URL(b, testenv.RedisURL)
	ctx := context.Background()
	c, err := redis.Open(ctx, url, fmt.Sprintf("cmsbench:%d:", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "k", cache.Entry{Value: make([]byte, 2048), ETag: `"x"`}, []string{"obj:1:1"}, time.Minute); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.InvalidateTags(ctx, "obj:1:1") }()
	for b.Loop() {
		if _, ok, err := c.Get(ctx, "k"); !ok || err != nil {
			b.Fatal("miss", err)
		}
	}
}

func TestPing(t *testing.T) {
	c, _, _ := newCache(t)
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}
