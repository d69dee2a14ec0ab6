package bleve

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
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

// TestDocCostIsTheHeap: the decoded documents the cache keeps (articles
// with keywords, text, a number, multi-valued references) hold about the
// memory docCost counts, and WithDocCacheBytes bounds that heap.
func TestDocCostIsTheHeap(t *testing.T) {
	t.Run("counted", func(t *testing.T) { docCacheHeap(t, 1<<30) })
	t.Run("bounded", func(t *testing.T) { docCacheHeap(t, 1<<20) })
}

// docCacheHeap loads 4,000 documents through an index whose cache holds
// limit bytes, and compares the heap the cache holds with its count and
// its limit.
func docCacheHeap(t *testing.T, limit int64) {
	ctx := context.Background()
	eng, err := New(t.TempDir(), WithDocCacheBytes(limit))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := search.Mapping{Fields: map[string]search.Kind{"branch": search.Long, "type": search.Long, "title": search.Text,
		"name": search.Keyword, "price": search.Double, "tags": search.Long, "ordered": search.Keyword, "src": search.Stored}}
	if err := eng.EnsureIndex(ctx, "docs", m); err != nil {
		t.Fatal(err)
	}
	const n = 4000
	var ops []search.Op
	for i := range n {
		ops = append(ops, search.Upsert(search.Document{ID: fmt.Sprintf("4-%d", i), Version: 1, Fields: map[string]any{
			"branch": 4, "type": 7, "title": fmt.Sprintf("red river summit %d", i), "name": fmt.Sprintf("Article %05d", i),
			"price": float64(i) / 3, "tags": []any{1001, 1002, 1003, 1004, 1005},
			"ordered": []any{fmt.Sprintf("n:1=%08.2f", float64(i)/3), "s:2=article", "s:3=red river summit"},
			"src":     fmt.Sprintf(`{"values":[{"a":1000,"l":201,"v":"Article %05d"},{"a":2001,"v":%d},{"a":2002,"v":[1001,1002,1003,1004,1005]}]}`, i, i)}}))
	}
	if _, err := eng.Bulk(ctx, "docs", ops); err != nil {
		t.Fatal(err)
	}
	ix, err := eng.lookup("docs")
	if err != nil {
		t.Fatal(err)
	}
	ix.docs = newDocCacheOf(1 << 30)
	r, err := ix.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 { // the engine's deferred work after the bulk write
		time.Sleep(100 * time.Millisecond)
		if _, ok, err := ix.load(r, "4-0"); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	ix.docs = newDocCacheOf(eng.docCacheBytes)
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return int64(s.HeapAlloc)
	}
	for i := range n {
		if _, ok, err := ix.load(r, fmt.Sprintf("4-%d", i)); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	// What the cache holds is the heap it frees: measured by dropping it,
	// not against a reading before the loads, which the engine's own
	// background work (segment merges, 0.2 MB once in CI) moves too.
	full := heap()
	cached, counted := len(ix.docs.m), ix.docs.bytes
	ix.docs = newDocCacheOf(eng.docCacheBytes)
	held := full - heap()
	t.Logf("%d documents: %d bytes counted, %d bytes of heap (%d per document)", cached, counted, held, held/max(int64(cached), 1))
	if float64(held) > 1.25*float64(counted) || float64(held) < 0.8*float64(counted) {
		t.Errorf("the cache holds %d bytes of heap and counts %d", held, counted)
	}
	if float64(held) > 1.25*float64(limit) {
		t.Errorf("the cache holds %d bytes of heap, its limit is %d", held, limit)
	}
	runtime.KeepAlive(ix.docs)
}
