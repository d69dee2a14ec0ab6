package elastic_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/search/searchtest"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// newEngine returns an engine whose indexes carry a prefix unique to t; every
// index with that prefix is deleted when t ends.
func newEngine(t *testing.T, opts ...elastic.Option) search.Engine {
	url := testenv.URL(t, testenv.ElasticsearchURL)
	prefix := fmt.Sprintf("cmstest-%d-", time.Now().UnixNano())
	e, err := elastic.New(url, append([]elastic.Option{elastic.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		testenv.DeleteIndexes(t, url, prefix)
	})
	return e
}

func TestConformance(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Engine { return newEngine(t) })
}

func TestPing(t *testing.T) {
	e := newEngine(t).(*elastic.Engine)
	if err := e.Ping(context.Background()); err != nil {
		t.Fatalf("ping a running cluster: %v", err)
	}
	down, err := elastic.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	if err := down.Ping(context.Background()); err == nil {
		t.Fatal("ping of a closed port succeeded")
	}
}

// TestCloseReleasesItsConnections: a closed engine keeps no connection to
// the cluster open; each kept-alive one holds two goroutines until the
// cluster or the idle timeout cuts it, so every process that closed an
// engine (a test, a stopping server) kept them.
func TestCloseReleasesItsConnections(t *testing.T) {
	url := testenv.URL(t, testenv.ElasticsearchURL)
	testenv.CheckGoroutines(t)
	e, err := elastic.New(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
