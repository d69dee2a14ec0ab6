package bleve_test

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/searchtest"
)

// TestAliasSurvivesReopen: the alias map is persisted in the engine dir.
func TestAliasSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bleve.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.EnsureIndex(ctx, "target-1", searchtest.ProductMapping); err != nil {
		t.Fatal(err)
	}
	doc := search.Document{ID: "a", Version: 1, Fields: map[string]any{"title": "Kept"}}
	if _, err := e.Bulk(ctx, "target-1", []search.Op{search.Upsert(doc)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SwitchAlias(ctx, "live", "target-1"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = bleve.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got, err := e.ResolveAlias(ctx, "live"); err != nil || got != "target-1" {
		t.Fatalf("ResolveAlias after reopen = %q, %v", got, err)
	}
	if d, err := e.Get(ctx, "live", "a"); err != nil || d.Fields["title"] != "Kept" {
		t.Fatalf("Get via alias after reopen = %+v, %v", d, err)
	}
}
