package testenv

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// DeleteIndexes deletes every Elasticsearch index named prefix*, one by
// one (Elasticsearch 8 refuses wildcard deletes:
// action.destructive_requires_name). Failures are logged, not fatal: it
// cleans up after a test.
func DeleteIndexes(t testing.TB, esURL, prefix string) {
	base := strings.TrimRight(esURL, "/")
	res, err := http.Get(base + "/_cat/indices/" + prefix + "*?h=index&expand_wildcards=all")
	if err != nil {
		t.Logf("cleanup: list indexes %s*: %v", prefix, err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	for _, name := range strings.Fields(string(body)) {
		req, _ := http.NewRequest(http.MethodDelete, base+"/"+name, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Logf("cleanup: delete index %s: %v", name, err)
			continue
		}
		_ = res.Body.Close()
	}
}
