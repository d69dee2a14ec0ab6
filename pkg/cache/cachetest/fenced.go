package cachetest

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/cache"
)

// runFenced runs the cases of SetAt and InvalidateTagsAt (part of Run).
func runFenced(t *testing.T, factory Factory) {
	t.Run("SetAtStoresWithoutFence", func(t *testing.T) {
		c := factory(t)
		setAt(t, c, "k", "v1", 5, true, "a", "b")
		wantHit(t, c, "k", "v1")
	})
	t.Run("InvalidateAtEvictsAndFences", func(t *testing.T) {
		c := factory(t)
		setAt(t, c, "k", "v1", 5, true, "a", "b")
		setAt(t, c, "other", "o", 5, true, "c")
		if err := c.InvalidateTagsAt(ctx, 7, "b"); err != nil {
			t.Fatal(err)
		}
		wantMiss(t, c, "k")
		wantHit(t, c, "other", "o")
		// Built before the invalidation's version: refused, on any of its tags.
		setAt(t, c, "k", "stale", 6, false, "a", "b")
		wantMiss(t, c, "k")
		// Built at or after it: stored.
		setAt(t, c, "k", "fresh", 7, true, "a", "b")
		wantHit(t, c, "k", "fresh")
		// Untouched tags are not fenced.
		setAt(t, c, "k2", "x", 1, true, "a", "c")
		wantHit(t, c, "k2", "x")
	})
	t.Run("InvalidateAtKeepsNewerBuilds", func(t *testing.T) {
		// An entry built at or after the invalidating version already
		// shows the change: a late invalidation (its consumer lagging
		// behind the readers) must not evict it. Plain Set entries have
		// no version and are always evicted.
		c := factory(t)
		setAt(t, c, "new", "n", 8, true, "a")
		setAt(t, c, "same", "s", 7, true, "a")
		setAt(t, c, "old", "o", 6, true, "a")
		set(t, c, "plain", "p", 0, "a")
		if err := c.InvalidateTagsAt(ctx, 7, "a"); err != nil {
			t.Fatal(err)
		}
		wantHit(t, c, "new", "n")
		wantHit(t, c, "same", "s")
		wantMiss(t, c, "old")
		wantMiss(t, c, "plain")
		// The kept entries stay reachable by later invalidations.
		if err := c.InvalidateTagsAt(ctx, 9, "a"); err != nil {
			t.Fatal(err)
		}
		wantMiss(t, c, "new")
		wantMiss(t, c, "same")
		// A plain invalidation evicts whatever the version.
		setAt(t, c, "new", "n", 20, true, "a")
		invalidate(t, c, "a")
		wantMiss(t, c, "new")
	})
	t.Run("FenceNeverLowers", func(t *testing.T) {
		c := factory(t)
		for _, v := range []int64{9, 3} {
			if err := c.InvalidateTagsAt(ctx, v, "a"); err != nil {
				t.Fatal(err)
			}
		}
		setAt(t, c, "k", "v", 8, false, "a")
		setAt(t, c, "k", "v", 9, true, "a")
		wantHit(t, c, "k", "v")
	})
	t.Run("PlainInvalidateStillWorks", func(t *testing.T) {
		c := factory(t)
		setAt(t, c, "k", "v", 1, true, "a")
		if err := c.InvalidateTags(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		wantMiss(t, c, "k")
	})
}

func setAt(t *testing.T, c cache.Cache, key, val string, builtAt int64, want bool, tags ...string) {
	t.Helper()
	ok, err := c.SetAt(ctx, key, cache.Entry{Value: []byte(val), ETag: `"` + val + `"`}, tags, 0, builtAt)
	if err != nil || ok != want {
		t.Fatalf("SetAt %s at %d = %v, %v; want stored=%v", key, builtAt, ok, err, want)
	}
}
