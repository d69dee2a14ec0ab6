package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/memory"
)

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestMaxBytesBoundsTheHeap: a cache of small tagged entries (where the
// bookkeeping outweighs the bytes stored, as for the render cache's and
// the response cache's metadata entries) holds no more heap than MaxBytes
// however many entries go through it, and no entry count has to help.
// The remembered tag versions stay within a sixteenth of it.
func TestMaxBytesBoundsTheHeap(t *testing.T) {
	const maxBytes = 8 << 20
	ctx := context.Background()
	before := heapInUse()
	c := memory.New(memory.Options{MaxBytes: maxBytes, MaxEntries: 1 << 30})
	for i := range 200_000 {
		tags := []string{fmt.Sprintf("obj:4:%d", i), fmt.Sprintf("list:4:%d", i%100), "branch:4"}
		_, _ = c.SetAt(ctx, fmt.Sprintf("delivery:get:%024d", i), cache.Entry{Value: make([]byte, 48), ETag: `"0123456789abcdef01234567"`}, tags, 0, int64(i))
	}
	held := heapInUse() - before
	t.Logf("%d entries, %d bytes counted, %d bytes of heap", c.Len(), c.Bytes(), held)
	if held > maxBytes*5/4 {
		t.Errorf("the cache holds %d bytes of heap, MaxBytes is %d", held, maxBytes)
	}
	if c.Bytes() > maxBytes {
		t.Errorf("counted %d bytes, MaxBytes is %d", c.Bytes(), maxBytes)
	}

	f := memory.New(memory.Options{MaxBytes: maxBytes})
	before = heapInUse()
	for i := range 200_000 {
		_ = f.InvalidateTagsAt(ctx, int64(i), fmt.Sprintf("obj:4:%d", i), fmt.Sprintf("ident:4:article-%d", i))
	}
	fences := heapInUse() - before
	t.Logf("fences: %d bytes of heap", fences)
	if fences > maxBytes/16*2 {
		t.Errorf("the remembered tag versions hold %d bytes of heap, want at most about %d", fences, maxBytes/16)
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(f)
}
