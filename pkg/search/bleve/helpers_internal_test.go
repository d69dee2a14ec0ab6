package bleve

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

// newTestIndex opens an in-memory engine with opts (closed when t ends)
// holding the index name of mapping m, and returns both.
func newTestIndex(t testing.TB, name string, m search.Mapping, opts ...Option) (*Engine, *index) {
	t.Helper()
	eng, err := New("", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	if err := eng.EnsureIndex(context.Background(), name, m); err != nil {
		t.Fatal(err)
	}
	ix, err := eng.lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return eng, ix
}
