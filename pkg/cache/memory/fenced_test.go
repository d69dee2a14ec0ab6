package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/cache/memory"
)

// TestFencesBounded: beyond the bound the fences collapse into a floor,
// which still refuses every build older than the newest forgotten fence.
func TestFencesBounded(t *testing.T) {
	ctx := context.Background()
	c := memory.New(memory.Options{})
	for i := range 100_001 {
		if err := c.InvalidateTagsAt(ctx, int64(i%50+1), fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := c.SetAt(ctx, "k", cache.Entry{Value: []byte("v")}, []string{"fresh"}, 0, 49); ok {
		t.Fatal("a build older than the floor was stored")
	}
	if ok, _ := c.SetAt(ctx, "k", cache.Entry{Value: []byte("v")}, []string{"fresh"}, 0, 50); !ok {
		t.Fatal("a build at the floor was refused")
	}
}
