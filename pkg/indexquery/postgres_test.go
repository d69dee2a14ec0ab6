package indexquery_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/jackc/pgx/v5"
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
		deletePrefix(t, esURL, prefix)
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
	serverURL := testenv.URL(t, testenv.PostgresURL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer admin.Close(ctx)
	name := "cms_iq_" + randHex(6)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, serverURL)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
