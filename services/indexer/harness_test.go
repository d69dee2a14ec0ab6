package indexer_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/indexer"
)

// env is one set of components with the relay and the indexer running.
type env struct {
	st    store.Store
	bus   events.Bus
	pub   events.Publisher // what the relay publishes through
	eng   search.Engine
	svc   *content.Service
	ix    *indexwriter.Indexer
	relay *outbox.Relay
	// indexer is the running service; retry, when set before start, is
	// its retry policy.
	indexer *indexer.Service
	retry   indexwriter.RetryPolicy
	iopts   indexwriter.Options
	// stopIndexer stops the running indexer (runIndexer starts another
	// with the same durable consumer).
	stopIndexer func()
	// subjectPrefix is put before "cms.changes.<branch>" (real NATS: a
	// unique prefix per test so streams of parallel runs do not overlap).
	subjectPrefix string
}

// prefixPublisher publishes under a subject prefix.
type prefixPublisher struct {
	events.Publisher
	prefix string
}

func (p prefixPublisher) Publish(ctx context.Context, e events.Event) error {
	e.Subject = p.prefix + e.Subject
	return p.Publisher.Publish(ctx, e)
}

func uniq() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// embeddedEnv: SQLite, embedded NATS, in-memory Bleve.
func embeddedEnv(t testing.TB) *env {
	t.Helper()
	return start(t, embeddedParts(t), indexwriter.Options{})
}

// embeddedParts opens the embedded components of an env, closed when the
// test ends; the caller may wrap e.eng before start.
func embeddedParts(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	bus, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	eng, err := bleve.New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return &env{st: st, bus: bus, pub: bus, eng: eng}
}

// realEnv: PostgreSQL, NATS and Elasticsearch from CMS_*_URL, each with a
// fresh database, stream (and subjects) and index prefix.
func realEnv(t testing.TB) *env {
	t.Helper()
	return start(t, realParts(t), realIndexing)
}

// realIndexing are the indexing options of realEnv.
var realIndexing = indexwriter.Options{Layout: indexdoc.Layout{IndexPrefix: "cms-"}}

// realParts opens the real components of an env like embeddedParts.
func realParts(t testing.TB) *env {
	t.Helper()
	pgURL := freshDatabase(t)
	natsURL := testenv.URL(t, testenv.NATSURL)
	esURL := testenv.URL(t, testenv.ElasticsearchURL)
	ctx := context.Background()
	id := uniq()
	st, err := postgres.Open(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	prefix := "idx" + id + "."
	stream := events.StreamConfig{Name: "IDXTEST_" + id, Subjects: []string{prefix + "cms.changes.>"}}
	bus, err := natsjs.Connect(ctx, natsURL, natsjs.Options{Stream: stream, Name: "indexer-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bus.Close()
		deleteStream(t, natsURL, stream.Name)
	})
	esPrefix := "cmstest-idx-" + id + "-"
	eng, err := elastic.New(esURL, elastic.WithPrefix(esPrefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(t, esURL, esPrefix)
	})
	return &env{st: st, bus: bus, pub: prefixPublisher{bus, prefix}, eng: eng, subjectPrefix: prefix}
}

// start bootstraps the content model and runs the relay and the indexer
// until the test ends.
func start(t testing.TB, e *env, iopts indexwriter.Options) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := content.Bootstrap(ctx, e.st); err != nil {
		t.Fatal(err)
	}
	e.svc = content.New(e.st, nil)
	e.iopts = iopts
	e.relay = outbox.New(e.st, e.pub, outbox.Options{Idle: 5 * time.Millisecond, MaxIdle: 50 * time.Millisecond})
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := e.relay.Run(ctx); err != nil && !errors.Is(err, events.ErrClosed) {
			t.Errorf("relay: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	e.runIndexer(t)
	return e
}

// runIndexer starts an indexer service (the durable consumer "indexer")
// until the test ends or stopIndexer is called.
func (e *env) runIndexer(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	svc := indexer.New(e.bus, e.st, e.eng, nil, indexer.Options{
		Subject: e.subjectPrefix + indexer.DefaultSubject, RetryDelay: 100 * time.Millisecond, Indexing: e.iopts,
		Retry: e.retry})
	e.ix, e.indexer = svc.Indexer(), svc
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := svc.Run(ctx); err != nil && !errors.Is(err, events.ErrClosed) {
			t.Errorf("indexer: %v", err)
		}
	}()
	var once sync.Once
	e.stopIndexer = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(e.stopIndexer)
}

// wait blocks until transaction tx is searchable.
func (e *env) wait(t testing.TB, tx int64) {
	t.Helper()
	e.relay.Notify()
	if cur, err := e.ix.WaitForVersion(context.Background(), tx, 30*time.Second); err != nil {
		t.Fatalf("WaitForVersion(%d): current %d: %v", tx, cur, err)
	}
}

// doc returns the document of object id on branch, or nil when absent.
func (e *env) doc(t testing.TB, branch, id int64) map[string]any {
	t.Helper()
	d, err := e.eng.Get(context.Background(), e.ix.ObjectsIndex(), indexdoc.DocID(branch, id))
	if errors.Is(err, search.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("Get %d/%d: %v", branch, id, err)
	}
	return d.Fields
}

func freshDatabase(t testing.TB) string {
	t.Helper()
	return testenv.PostgresDatabase(t)
}

func deleteStream(t testing.TB, natsURL, name string) {
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Errorf("cleanup connect: %v", err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("cleanup delete stream %s: %v", name, err)
	}
}

var editor = content.Change{Caller: &auth.Principal{Name: "editor"}, Comment: "test"}

func js(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func vin(attr, lang int64, v any) content.ValueInput {
	return content.ValueInput{Attribute: attr, Language: lang, JSON: js(v)}
}

func ptr[T any](v T) *T { return &v }

func id(n int64) string { return fmt.Sprint(n) }
