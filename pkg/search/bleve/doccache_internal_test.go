package bleve

import (
	"fmt"
	"testing"
)

// The decoded-document cache stays within its byte limit, frees a quarter
// of it when full, keeps accounting exact across replacements and drops,
// and refuses a document costing more than a quarter of it.
func TestDocCacheBytes(t *testing.T) {
	doc := func() map[string]any { return map[string]any{"a": "x", "b": []any{1.0, 2.0}} }
	const src = 1000
	cost := docCost(src, doc())
	c := newDocCacheOf(100 * cost)
	for i := range 1000 {
		c.put(fmt.Sprint(i), 1, doc(), src)
		if c.bytes > c.limit {
			t.Fatalf("after %d puts the cache holds %d bytes, limit %d", i+1, c.bytes, c.limit)
		}
	}
	if n := len(c.m); n < 75 || n > 100 {
		t.Errorf("%d entries of cost %d under a limit of %d", n, cost, c.limit)
	}
	sum := func() (s int64) {
		for _, d := range c.m {
			s += d.cost
		}
		return s
	}
	if c.bytes != sum() {
		t.Errorf("accounted %d bytes, entries cost %d", c.bytes, sum())
	}
	c.put("999", 2, doc(), src) // a newer version replaces, not adds
	for id := range c.m {
		if id != "999" { // dropping the replaced entry would make the get below a miss
			c.drop(id)
			break
		}
	}
	c.drop("never-there")
	if c.bytes != sum() {
		t.Errorf("after replace and drops: accounted %d bytes, entries cost %d", c.bytes, sum())
	}
	if got, ok := c.get("999", 2, []string{"a"}); !ok || len(got) != 1 || got["a"] != "x" {
		t.Errorf("get(999, 2, [a]) = %v, %v", got, ok)
	}
	if _, ok := c.get("999", 1, nil); ok {
		t.Error("an older version is a miss")
	}
	// Replacing an entry of a full cache with a larger version evicts
	// (in map order, maybe the replaced entry itself): counted once.
	for round := range 50 {
		full := newDocCacheOf(4000)
		for i := range 8 {
			full.put(fmt.Sprint(i), 1, doc(), 303) // 8 × 495 = 3,960 bytes
		}
		full.put(fmt.Sprint(round%8), 2, doc(), 350)
		var sum int64
		for _, d := range full.m {
			sum += d.cost
		}
		if full.bytes != sum || full.bytes > full.limit {
			t.Fatalf("round %d: accounted %d bytes, entries cost %d, limit %d", round, full.bytes, sum, full.limit)
		}
	}
	c.put("huge", 1, doc(), int(c.limit/4)+1)
	if _, ok := c.m["huge"]; ok {
		t.Error("a document costing over a quarter of the cache was kept")
	}
}
