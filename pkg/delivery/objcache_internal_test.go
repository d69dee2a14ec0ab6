package delivery

import (
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// TestObjectCacheKeepsWhatIsReadAgain: the cache stays within its bytes
// and, when full, drops renderings read once before those read again; a
// source that differs in its header fields is not answered from another's
// rendering, nor a source without values.
func TestObjectCacheKeepsWhatIsReadAgain(t *testing.T) {
	src := func(id int64) indexdoc.Source {
		return indexdoc.Source{ID: id, GUID: "g", Values: []indexdoc.SourceValue{{Attr: 1000, Value: []byte(`"x"`)}}}
	}
	c := newObjectCache(64 << 10)
	v := &view{m: &branchModel{branch: 4, version: 7}, key: "k"}
	popular := src(1)
	pk, _ := c.key(v, &popular)
	c.put(pk, &popular, Object{DisplayName: "popular"})
	for i := int64(2); i < 2000; i++ {
		s := src(i)
		k, ok := c.key(v, &s)
		if !ok {
			t.Fatal("a source with values is not cached")
		}
		c.put(k, &s, Object{DisplayName: "once"})
		if o, ok := c.get(pk, &popular); !ok || o.DisplayName != "popular" {
			t.Fatalf("after %d renderings read once, the one read each time is gone", i)
		}
		if c.bytes > c.limit {
			t.Fatalf("%d bytes over the limit %d", c.bytes, c.limit)
		}
	}
	other := popular
	other.LastTransaction = 9
	if _, ok := c.get(pk, &other); ok {
		t.Error("a source with another transaction got the rendering of the first")
	}
	if _, ok := c.key(v, &indexdoc.Source{ID: 5}); ok {
		t.Error("a source without values has a key")
	}
	var none *objectCache
	if _, ok := none.key(v, &popular); ok {
		t.Error("no cache has a key")
	}
}
