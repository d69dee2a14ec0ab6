package searchtest

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// testAliases pins down search.Aliaser: reads and writes through an alias,
// an atomic switch, replacing a concrete index of the alias's name, and
// aliases vanishing with their index.
func testAliases(t *testing.T, e search.Engine) {
	al, ok := e.(search.Aliaser)
	if !ok {
		t.Fatalf("%T does not implement search.Aliaser (both bundled engines must)", e)
	}
	ctx := context.Background()
	p := Products()
	a := setup(t, e, p[:2])
	b := setup(t, e, p[2:3])
	alias := IndexName(t)

	if _, err := al.ResolveAlias(ctx, alias); err == nil {
		t.Fatal("ResolveAlias of an unknown alias succeeded")
	} else {
		wantErr(t, "ResolveAlias(unknown)", err, search.ErrAliasNotFound)
	}
	_, err := al.SwitchAlias(ctx, alias, "missing-"+alias)
	wantErr(t, "SwitchAlias to a missing index", err, search.ErrIndexNotFound)

	prev, err := al.SwitchAlias(ctx, alias, a)
	if err != nil || prev != "" {
		t.Fatalf("SwitchAlias(new) = %q, %v", prev, err)
	}
	if got, err := al.ResolveAlias(ctx, alias); err != nil || got != a {
		t.Fatalf("ResolveAlias = %q, %v; want %q", got, err, a)
	}
	if err := e.EnsureIndex(ctx, alias, ProductMapping); err != nil {
		t.Errorf("EnsureIndex(alias, same mapping): %v", err)
	}
	other := search.Mapping{Fields: map[string]search.Kind{"title": search.Keyword}}
	wantErr(t, "EnsureIndex(alias, other mapping)", e.EnsureIndex(ctx, alias, other), search.ErrMappingConflict)

	// Reads and writes go to the target.
	if _, err := e.Get(ctx, alias, "p1"); err != nil {
		t.Errorf("Get via alias: %v", err)
	}
	bulk(t, e, alias, search.Upsert(search.Document{ID: "x1", Version: 3, Fields: map[string]any{"title": "Via alias"}}))
	if d, err := e.Get(ctx, a, "x1"); err != nil || d.Version != 3 {
		t.Errorf("write via alias: Get(target) = %+v, %v", d, err)
	}
	refresh(t, e, alias)
	wantIDs(t, "search via alias", ids(mustSearch(t, e, search.SearchRequest{Index: alias, Size: 10})), []string{"p1", "p2", "x1"})

	// Switch: the alias now reads b only, a is untouched.
	prev, err = al.SwitchAlias(ctx, alias, b)
	if err != nil || prev != a {
		t.Fatalf("SwitchAlias(a→b) = %q, %v; want %q", prev, err, a)
	}
	if n, err := e.Count(ctx, alias, nil); err != nil || n != 1 {
		t.Errorf("Count via switched alias = %d, %v; want 1", n, err)
	}
	_, err = e.Get(ctx, alias, "p1")
	wantErr(t, "Get(old doc) via switched alias", err, search.ErrNotFound)
	if n, err := e.Count(ctx, a, nil); err != nil || n != 3 {
		t.Errorf("Count(old index) = %d, %v; want 3", n, err)
	}
	wantErr(t, "DeleteIndex(alias)", e.DeleteIndex(ctx, alias), search.ErrIndexNotFound)

	// A concrete index with the alias's name is replaced atomically.
	c := setup(t, e, p[4:5])
	prev, err = al.SwitchAlias(ctx, c, b)
	if err != nil || prev != "" {
		t.Fatalf("SwitchAlias(concrete name) = %q, %v", prev, err)
	}
	if got, err := al.ResolveAlias(ctx, c); err != nil || got != b {
		t.Errorf("ResolveAlias(replaced) = %q, %v; want %q", got, err, b)
	}
	if _, err := e.Get(ctx, c, "p3"); err != nil {
		t.Errorf("Get via alias that replaced an index: %v", err)
	}
	_, err = e.Get(ctx, c, "p5")
	wantErr(t, "Get(doc of replaced index)", err, search.ErrNotFound)

	// Deleting the target drops its aliases.
	if err := e.DeleteIndex(ctx, b); err != nil {
		t.Fatalf("DeleteIndex(target): %v", err)
	}
	for _, name := range []string{alias, c} {
		_, err := al.ResolveAlias(ctx, name)
		wantErr(t, "ResolveAlias after its index was deleted", err, search.ErrAliasNotFound)
	}
}
