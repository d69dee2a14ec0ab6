package elastic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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
		deletePrefix(t, url, prefix)
	})
	return e
}

func TestConformance(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Engine { return newEngine(t) })
}

// deletePrefix deletes every index named prefix*, one by one: Elasticsearch 8
// refuses wildcard deletes (action.destructive_requires_name).
func deletePrefix(t *testing.T, url, prefix string) {
	base := strings.TrimRight(url, "/")
	res, err := http.Get(base + "/_cat/indices/" + prefix + "*?h=index&expand_wildcards=all")
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, name := range strings.Fields(string(body)) {
		req, _ := http.NewRequest(http.MethodDelete, base+"/"+name, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
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
