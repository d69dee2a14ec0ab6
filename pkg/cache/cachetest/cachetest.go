// Package cachetest is the conformance suite every cache.Cache must pass; the
// memory and Redis caches both run it.
package cachetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Factory returns a fresh, empty cache for one test and registers its cleanup.
type Factory func(t *testing.T) cache.Cache

// Run runs the suite.
func Run(t *testing.T, factory Factory) {
	testenv.RunCases(t, factory, []testenv.Case[cache.Cache]{
		{Name: "Miss", Run: testMiss},
		{Name: "SetGet", Run: testSetGet},
		{Name: "Overwrite", Run: testOverwrite},
		{Name: "TTL", Run: testTTL},
		{Name: "InvalidateTags", Run: testInvalidate},
		{Name: "SeveralTags", Run: testSeveralTags},
		{Name: "InvalidateThenSetAgain", Run: testInvalidateThenSet},
		{Name: "Concurrent", Run: testConcurrent},
	})
	runFenced(t, factory)
}

var ctx = context.Background()

func set(t *testing.T, c cache.Cache, key, val string, ttl time.Duration, tags ...string) {
	t.Helper()
	if err := c.Set(ctx, key, cache.Entry{Value: []byte(val), ETag: `"` + val + `"`}, tags, ttl); err != nil {
		t.Fatalf("Set %s: %v", key, err)
	}
}

func wantHit(t *testing.T, c cache.Cache, key, val string) {
	t.Helper()
	e, ok, err := c.Get(ctx, key)
	if err != nil || !ok {
		t.Fatalf("Get %s: ok=%v err=%v, want hit", key, ok, err)
	}
	if string(e.Value) != val || e.ETag != `"`+val+`"` {
		t.Errorf("Get %s = %q etag %s, want %q", key, e.Value, e.ETag, val)
	}
}

func wantMiss(t *testing.T, c cache.Cache, key string) {
	t.Helper()
	e, ok, err := c.Get(ctx, key)
	if err != nil || ok {
		t.Errorf("Get %s = %q, ok=%v, err=%v; want miss", key, e.Value, ok, err)
	}
}

func invalidate(t *testing.T, c cache.Cache, tags ...string) {
	t.Helper()
	if err := c.InvalidateTags(ctx, tags...); err != nil {
		t.Fatalf("InvalidateTags: %v", err)
	}
}

func testMiss(t *testing.T, c cache.Cache) {
	wantMiss(t, c, "nope")
	invalidate(t, c, "unknown-tag") // invalidating an unknown tag is fine
	invalidate(t, c)
}

func testSetGet(t *testing.T, c cache.Cache) {
	set(t, c, "k1", "v1", time.Minute, "branch:1")
	wantHit(t, c, "k1", "v1")
	bin := []byte{0, 1, 2, 255, '\n'}
	if err := c.Set(ctx, "bin", cache.Entry{Value: bin}, nil, 0); err != nil {
		t.Fatal(err)
	}
	e, ok, err := c.Get(ctx, "bin")
	if err != nil || !ok || !bytes.Equal(e.Value, bin) || e.ETag != "" {
		t.Errorf("binary value: %v %v %v %q", e.Value, ok, err, e.ETag)
	}
	if err := c.Set(ctx, "empty", cache.Entry{}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(ctx, "empty"); !ok {
		t.Errorf("empty entry: miss, want hit")
	}
}

func testOverwrite(t *testing.T, c cache.Cache) {
	set(t, c, "k", "old", time.Minute, "t-old")
	set(t, c, "k", "new", time.Minute, "t-new")
	wantHit(t, c, "k", "new")
	invalidate(t, c, "t-new")
	wantMiss(t, c, "k")
}

func testTTL(t *testing.T, c cache.Cache) {
	set(t, c, "short", "s", 300*time.Millisecond, "tag")
	set(t, c, "long", "l", time.Minute, "tag")
	set(t, c, "forever", "f", 0)
	wantHit(t, c, "short", "s")
	time.Sleep(600 * time.Millisecond)
	wantMiss(t, c, "short")
	wantHit(t, c, "long", "l")
	wantHit(t, c, "forever", "f")
	// A tag whose only key expired, and a key set again after expiry.
	set(t, c, "short", "s2", time.Minute, "tag")
	wantHit(t, c, "short", "s2")
}

func testInvalidate(t *testing.T, c cache.Cache) {
	set(t, c, "a", "a", time.Minute, "obj:1:10", "branch:1")
	set(t, c, "b", "b", time.Minute, "obj:1:11", "branch:1")
	set(t, c, "c", "c", time.Minute, "obj:2:10", "branch:2")
	set(t, c, "d", "d", time.Minute)
	invalidate(t, c, "obj:1:10")
	wantMiss(t, c, "a")
	wantHit(t, c, "b", "b")
	wantHit(t, c, "c", "c")
	wantHit(t, c, "d", "d")
	invalidate(t, c, "branch:1")
	wantMiss(t, c, "b")
	wantHit(t, c, "c", "c")
	wantHit(t, c, "d", "d")
}

func testSeveralTags(t *testing.T, c cache.Cache) {
	// A list response built from three objects.
	set(t, c, "list", "L", time.Minute, "obj:1:1", "obj:1:2", "obj:1:3")
	set(t, c, "one", "O", time.Minute, "obj:1:2")
	set(t, c, "other", "X", time.Minute, "obj:1:4")
	invalidate(t, c, "obj:1:3")
	wantMiss(t, c, "list")
	wantHit(t, c, "one", "O")
	invalidate(t, c, "obj:1:9", "obj:1:2", "obj:1:8") // several tags at once
	wantMiss(t, c, "one")
	wantHit(t, c, "other", "X")
}

func testInvalidateThenSet(t *testing.T, c cache.Cache) {
	set(t, c, "k", "v1", time.Minute, "t")
	invalidate(t, c, "t")
	set(t, c, "k", "v2", time.Minute, "t")
	wantHit(t, c, "k", "v2")
	invalidate(t, c, "t")
	wantMiss(t, c, "k")
}

func testConcurrent(t *testing.T, c cache.Cache) {
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("w%d-k%d", w, i%10)
				val := fmt.Sprintf("w%d-v%d", w, i)
				if err := c.Set(ctx, key, cache.Entry{Value: []byte(val)}, []string{fmt.Sprintf("w%d", w), "shared"}, time.Minute); err != nil {
					errs <- err
					return
				}
				e, ok, err := c.Get(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				// Another worker may have invalidated "shared" meanwhile;
				// a hit must still be this worker's latest value.
				if ok && string(e.Value) != val {
					errs <- fmt.Errorf("get %s = %q, want %q", key, e.Value, val)
					return
				}
				if i%50 == 49 {
					if err := c.InvalidateTags(ctx, "shared"); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// After the dust settles, one invalidation removes everything tagged.
	set(t, c, "final", "f", time.Minute, "shared")
	invalidate(t, c, "shared")
	for w := range workers {
		for i := range 10 {
			wantMiss(t, c, fmt.Sprintf("w%d-k%d", w, i))
		}
	}
	wantMiss(t, c, "final")
}
