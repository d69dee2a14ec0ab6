package delivery

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// TestSourceCacheBoundsBytes: the decoded sources Delivery keeps hold at
// most the cache's bytes, on the heap too, however many documents are
// read.
func TestSourceCacheBoundsBytes(t *testing.T) {
	const limit = 1 << 20
	heap := func() int64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return int64(s.HeapAlloc)
	}
	before := heap()
	c := newSourceCache(limit)
	for i := range 20_000 {
		fields := map[string]any{indexdoc.FieldSource: fmt.Sprintf(`{"id":%d,"guid":"%032d","typeRef":7,"lastTransaction":9,"values":[`+
			`{"a":1000,"l":201,"t":"String","x":"Article %05d"},{"a":2001,"t":"Decimal","x":%d.5},{"a":2002,"t":"ObjRef","x":1001},`+
			`{"a":2003,"s":0,"t":"ObjRef","x":1002},{"a":2003,"s":1,"t":"ObjRef","x":1003},{"a":2003,"s":2,"t":"ObjRef","x":1004}]}`, i, i, i, i)}
		if _, err := c.decode(fmt.Sprint(i), 1, fields); err != nil {
			t.Fatal(err)
		}
		if c.bytes > limit {
			t.Fatalf("after %d documents the cache counts %d bytes, limit %d", i+1, c.bytes, limit)
		}
	}
	held := heap() - before
	t.Logf("%d sources, %d bytes counted, %d bytes of heap", len(c.m), c.bytes, held)
	if held > limit*5/4 {
		t.Errorf("the cache holds %d bytes of heap, its limit is %d", held, limit)
	}
	runtime.KeepAlive(c)
}
