package elastic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestKeywordPrefixesFieldLimit: an index with keyword prefixes has its
// field limit raised to search.MaxDynamicFields (Elasticsearch allows 1000
// by default), so more than 1000 prefixed fields can be written.
func TestKeywordPrefixesFieldLimit(t *testing.T) {
	url := strings.TrimRight(testenv.URL(t, testenv.ElasticsearchURL), "/")
	prefix := fmt.Sprintf("cmstest-%d-", time.Now().UnixNano())
	e, err := elastic.New(url, elastic.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(); testenv.DeleteIndexes(t, url, prefix) })
	ctx := context.Background()
	m := search.Mapping{Fields: map[string]search.Kind{"id": search.Keyword}, KeywordPrefixes: []string{"sk_"}}
	if err := e.EnsureIndex(ctx, "lim", m); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(url + "/" + prefix + "lim/_settings")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]struct {
		Settings struct {
			Index struct {
				Mapping struct {
					TotalFields struct {
						Limit string `json:"limit"`
					} `json:"total_fields"`
				} `json:"mapping"`
			} `json:"index"`
		} `json:"settings"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if got := out[prefix+"lim"].Settings.Index.Mapping.TotalFields.Limit; got != fmt.Sprint(search.MaxDynamicFields) {
		t.Errorf("total_fields.limit = %q, want %d", got, search.MaxDynamicFields)
	}
	fields := map[string]any{"id": "a"}
	for i := range 1500 {
		fields[fmt.Sprintf("sk_%d", i)] = "v"
	}
	if _, err := e.Bulk(ctx, "lim", []search.Op{search.Upsert(search.Document{ID: "a", Version: 1, Fields: fields})}); err != nil {
		t.Fatalf("1500 prefixed fields: %v", err)
	}
}
