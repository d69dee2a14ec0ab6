package indexquery_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexquery"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// env is the real write pipeline without the event bus: pkg/content
// writes on SQLite, the outbox is drained into indexwriter.Indexer.Apply on
// a real engine, and the Service under test reads that index.
type env struct {
	st  store.Store
	svc *content.Service
	ix  *indexwriter.Indexer
	q   *indexquery.Service
}

// Options the indexer and the reader share.
func indexingOptions(prefix string) indexwriter.Options {
	return indexwriter.Options{Layout: indexdoc.Layout{IndexPrefix: prefix}}
}

func bleveEnv(t *testing.T) *env {
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return newEnv(t, eng, indexingOptions(""))
}

// elasticEnv uses CMS_ELASTICSEARCH_URL with an index prefix of its own
// (skipped without it, failing under CI=true).
func elasticEnv(t *testing.T) *env {
	url := testenv.URL(t, testenv.ElasticsearchURL)
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	prefix := "cmstest-iq-" + hex.EncodeToString(b) + "-"
	eng, err := elastic.New(url, elastic.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(t, url, prefix)
	})
	return newEnv(t, eng, indexingOptions("cms-"))
}

func newEnv(t *testing.T, eng search.Engine, opts indexwriter.Options) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvStore(t, eng, opts, st)
}

// newEnvStore is newEnv on a given (empty) store.
func newEnvStore(t *testing.T, eng search.Engine, opts indexwriter.Options, st store.Store) *env {
	t.Helper()
	ctx := context.Background()
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	ix, err := indexwriter.New(st, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	q, err := indexquery.New(eng, indexquery.Options{Layout: opts.Layout, PollInterval: opts.PollInterval})
	if err != nil {
		t.Fatal(err)
	}
	return &env{st: st, svc: content.New(st, nil), ix: ix, q: q}
}

// sync applies every pending outbox event, in commit order, and returns
// the change-tracking version reached.
func (e *env) sync(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	for {
		evs, err := e.st.ClaimOutbox(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		ids := make([]int64, 0, len(evs))
		for _, oe := range evs {
			ev, err := changes.Parse(oe.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.ix.Apply(ctx, ev); err != nil {
				t.Fatalf("apply tx %d: %v", ev.Transaction, err)
			}
			ids = append(ids, oe.ID)
		}
		if err := e.st.AckOutbox(ctx, ids); err != nil {
			t.Fatal(err)
		}
	}
	v, err := e.ix.CurrentVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var editor = content.Change{Caller: &auth.Principal{Name: "editor"}, Comment: "test"}

func vin(attr, lang int64, v any) content.ValueInput {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

func ptr[T any](v T) *T { return &v }
