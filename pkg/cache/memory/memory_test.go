package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/cachetest"
	"github.com/cmsplatform/cms/pkg/cache/memory"
)

func TestConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Cache {
		c := memory.New(memory.Options{})
		t.Cleanup(func() { _ = c.Close() })
		return c
	})
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	c := memory.New(memory.Options{MaxEntries: 3})
	for _, k := range []string{"a", "b", "c"} {
		_ = c.Set(ctx, k, cache.Entry{Value: []byte(k)}, []string{"t"}, 0)
	}
	if _, ok, _ := c.Get(ctx, "a"); !ok { // a is now most recently used
		t.Fatal("a missing")
	}
	_ = c.Set(ctx, "d", cache.Entry{Value: []byte("d")}, []string{"t"}, 0)
	if _, ok, _ := c.Get(ctx, "b"); ok {
		t.Error("b (least recently used) was not evicted")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok, _ := c.Get(ctx, k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}
	_ = c.InvalidateTags(ctx, "t")
	if c.Len() != 0 {
		t.Errorf("Len after invalidating = %d, want 0", c.Len())
	}
}

func TestMaxBytes(t *testing.T) {
	ctx := context.Background()
	const o = memory.EntryOverhead + 1 // an entry's cost beyond its value (a one-byte key)
	c := memory.New(memory.Options{MaxBytes: 100 + 2*o})
	_ = c.Set(ctx, "a", cache.Entry{Value: make([]byte, 60)}, nil, 0)
	_ = c.Set(ctx, "b", cache.Entry{Value: make([]byte, 30)}, nil, 0)
	_ = c.Set(ctx, "c", cache.Entry{Value: make([]byte, 30)}, nil, 0) // evicts a
	if _, ok, _ := c.Get(ctx, "a"); ok {
		t.Error("a not evicted by the byte bound")
	}
	_ = c.Set(ctx, "huge", cache.Entry{Value: make([]byte, 100+2*o)}, nil, 0)
	if _, ok, _ := c.Get(ctx, "huge"); ok {
		t.Error("entry larger than MaxBytes was stored")
	}
	if _, ok, _ := c.Get(ctx, "b"); !ok {
		t.Error("a too-large entry evicted others")
	}
}

func TestInjectedClock(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	c := memory.New(memory.Options{Now: func() time.Time { return now }})
	_ = c.Set(ctx, "k", cache.Entry{Value: []byte("v")}, nil, time.Hour)
	now = now.Add(59 * time.Minute)
	if _, ok, _ := c.Get(ctx, "k"); !ok {
		t.Fatal("expired early")
	}
	now = now.Add(time.Minute)
	if _, ok, _ := c.Get(ctx, "k"); ok {
		t.Fatal("not expired after the TTL")
	}
}

func BenchmarkGetHit(b *testing.B) {
	ctx := context.Background()
	c := memory.New(memory.Options{})
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		_ = c.Set(ctx, keys[i], cache.Entry{Value: make([]byte, 2048), ETag: `"x"`}, []string{"obj:1:1", "branch:1"}, time.Hour)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok, _ := c.Get(ctx, keys[i%len(keys)]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}
