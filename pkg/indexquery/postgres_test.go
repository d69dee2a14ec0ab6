package indexquery_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestCommentsPostgresElasticsearch runs the comment scenario on the
// distributed components: PostgreSQL (a fresh database) and Elasticsearch
// (skipped without CMS_POSTGRES_URL / CMS_ELASTICSEARCH_URL, failing under
// CI=true).
func TestCommentsPostgresElasticsearch(t *testing.T) {
	pgURL := freshDatabase(t)
	esURL := testenv.URL(t, testenv.ElasticsearchURL)
	st, err := postgres.Open(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	prefix := "cmstest-iqpg-" + randHex(5) + "-"
	eng, err := elastic.New(esURL, elastic.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(t, esURL, prefix)
	})
	commentScenario(t, newEnvStore(t, eng, indexingOptions("cms-"), st))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freshDatabase creates a database on CMS_POSTGRES_URL's server, dropped
// after the test, and returns its URL.
func freshDatabase(t *testing.T) string {
	t.Helper()
	return testenv.PostgresDatabase(t)
}
