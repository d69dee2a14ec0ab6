package indexer_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/component"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/indexer"
)

// crashLoopMaxAttempts is the park threshold of the crash loop tests.
const crashLoopMaxAttempts = 2

// TestCrashLoopDuringOutageParksNothing: on the real components, an
// indexer crash loop during an Elasticsearch outage. Every indexer starts
// while Elasticsearch answers and is cut off it (a fault proxy refusing
// connections, as a stopped Elasticsearch does) right after it created
// its indexes, so the waiting event is delivered to it, fails because the
// engine is away, and the indexer is killed while it waits: the event is
// delivered more often than the park threshold without any process seeing
// its handling end. Once the connection stays, the next indexer must
// apply it: the deliveries counted the outage, not crashes while applying,
// so nothing is parked and the write is searchable.
func TestCrashLoopDuringOutageParksNothing(t *testing.T) {
	natsURL := testenv.URL(t, testenv.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	f := newFaultEnv(t, ctx, natsURL)
	t.Cleanup(func() { deleteStream(t, natsURL, f.stream.Name) })
	rctx, stopRelay := context.WithCancel(ctx)
	defer func() { stopRelay(); f.relayWG.Wait() }()
	f.startRelay(t, rctx)

	u, err := url.Parse(f.esURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewFaultProxy(t, u.Host)
	raw, err := elastic.New("http://"+proxy.Addr, elastic.WithPrefix(f.esPrefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	// As the indexer target wires it: a refused connection is the
	// component being unavailable.
	eng := search.WithDeadline(raw, component.Guard{Name: "search", Timeout: 2 * time.Second})

	r := f.startCrashLoopIndexer(t, ctx, "crashloop-indexer-0", eng)
	f.writeN(t, ctx, 1)
	f.waitVisible(t, ctx, r.svc, time.Minute)
	r.stop(t)

	f.writeN(t, ctx, 1)
	const restarts = crashLoopMaxAttempts + 2
	for i := range restarts {
		cut := &cutAtFirstUse{Engine: eng, cut: func() { proxy.Set(testenv.ProxyRefusing) }}
		r = f.startCrashLoopIndexer(t, ctx, "crashloop-indexer-"+id(int64(i+1)), cut)
		// Not ready: its handling of the event met the engine away.
		pollFor(t, ctx, "the event waiting for the engine", func() bool { return r.svc.Ready() != nil })
		r.crash(t)
		proxy.Set(testenv.ProxyForward)
	}
	r = f.startCrashLoopIndexer(t, ctx, "crashloop-indexer-last", eng)
	defer r.stop(t)
	f.waitVisible(t, ctx, r.svc, time.Minute)
	list, total, err := r.svc.Indexer().Parked(ctx)
	if err != nil || total != 0 {
		t.Fatalf("parked after the outage: %d %+v (%v); want none: an outage is no crash loop", total, list, err)
	}
	pollFor(t, ctx, "the event counted as applied", func() bool { return r.svc.Stats().Applied > 0 })
	if st := r.svc.Stats(); st.Parked != 0 {
		t.Fatalf("stats after the outage %+v: want none parked", st)
	}
}

// TestCrashLoopParks: an event whose apply kills the indexer every time
// (here: it never ends, and the indexer is killed; nothing it does after
// the kill reaches the engine) while the engine answers is parked: its
// deliveries beyond the park threshold open a crash probe that the next
// delivery finds still open.
func TestCrashLoopParks(t *testing.T) {
	natsURL := testenv.URL(t, testenv.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	f := newFaultEnv(t, ctx, natsURL)
	t.Cleanup(func() { deleteStream(t, natsURL, f.stream.Name) })
	rctx, stopRelay := context.WithCancel(ctx)
	defer func() { stopRelay(); f.relayWG.Wait() }()
	f.startRelay(t, rctx)
	r := f.startCrashLoopIndexer(t, ctx, "crashloop-parks-0", f.eng)
	f.writeN(t, ctx, 1)
	f.waitVisible(t, ctx, r.svc, time.Minute)
	r.stop(t)
	f.waitNoPullWaiting(t, ctx)

	f.writeN(t, ctx, 1)
	killer, err := f.st.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Deliveries 1 and 2 crash, 3 (beyond the threshold) crashes with
	// its probe open, 4 finds it and parks. The server counts a delivery
	// that no handler saw too (one sent to a connection as it closed): the
	// event may then park one indexer earlier, but never before the
	// threshold's crashes nor without an open probe, and the parked record
	// names the server's count.
	const wantDeliveries = crashLoopMaxAttempts + 2
	for i := 1; ; i++ {
		if i > wantDeliveries {
			t.Fatalf("not parked after %d crashing deliveries", i-1)
		}
		k := &killable{Engine: f.eng, entered: make(chan struct{})}
		r = f.startCrashLoopIndexer(t, ctx, "crashloop-parks-"+id(int64(i)), k)
		if i == wantDeliveries {
			pollFor(t, ctx, "parked", func() bool { return r.svc.Stats().Parked == 1 })
			break
		}
		parked := false
		pollFor(t, ctx, "the event applied", func() bool {
			select {
			case <-k.entered:
				return true
			default:
			}
			if st := r.svc.Stats(); st.Parked > 0 {
				if i <= crashLoopMaxAttempts {
					t.Fatalf("parked at indexer %d, want after %d crashes at least: a crash loop parks once a crash probe was left open", i, crashLoopMaxAttempts)
				}
				parked = true
				return true
			}
			return false
		})
		if parked {
			t.Logf("parked by indexer %d: a delivery was counted that no handler saw", i)
			break
		}
		k.dead.Store(true)
		r.crash(t)
		f.waitNoPullWaiting(t, ctx)
	}
	defer r.stop(t)
	list, _, err := r.svc.Indexer().Parked(ctx)
	if err != nil || len(list) != 1 || list[0].Transaction != killer || list[0].Deliveries < wantDeliveries {
		t.Fatalf("parked %+v (%v); want transaction %d after %d deliveries or more", list, err, killer, wantDeliveries)
	}
}

// waitNoPullWaiting waits until the indexer's durable consumer holds no
// pull request: those of a stopped or killed indexer are gone, so the
// server delivers the next message to the next indexer, not to a
// connection that closed.
func (f *faultEnv) waitNoPullWaiting(t *testing.T, ctx context.Context) {
	t.Helper()
	nc, err := nats.Connect(f.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var ci *jetstream.ConsumerInfo
	pollFor(t, ctx, "no pull request waiting", func() bool {
		c, err := js.Consumer(ctx, f.stream.Name, indexer.DefaultDurable)
		if err == nil {
			ci, err = c.Info(ctx)
		}
		return err == nil && ci.NumWaiting == 0
	})
}

// killable is an indexer's engine: a write of objects blocks until its
// context ends (entered is closed then), and after dead is set
// every call fails, as nothing reaches the engine from a killed process.
type killable struct {
	search.Engine
	dead    atomic.Bool
	once    sync.Once
	entered chan struct{}
}

var errKilled = errors.New("the process was killed")

func (k *killable) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	if k.dead.Load() {
		return search.BulkResult{}, errKilled
	}
	if strings.HasSuffix(index, indexdoc.ObjectsIndex) {
		k.once.Do(func() { close(k.entered) })
		<-ctx.Done()
		return search.BulkResult{}, ctx.Err()
	}
	return k.Engine.Bulk(ctx, index, ops)
}

func (k *killable) Get(ctx context.Context, index, id string) (search.Document, error) {
	if k.dead.Load() {
		return search.Document{}, errKilled
	}
	return k.Engine.Get(ctx, index, id)
}

func (k *killable) Ping(ctx context.Context) error {
	if k.dead.Load() {
		return errKilled
	}
	return k.Engine.(interface{ Ping(context.Context) error }).Ping(ctx)
}

// cutAtFirstUse calls cut (once) before its first call other than
// EnsureIndex: the engine goes away right after the indexer started.
type cutAtFirstUse struct {
	search.Engine
	once sync.Once
	cut  func()
}

func (c *cutAtFirstUse) use() { c.once.Do(c.cut) }

func (c *cutAtFirstUse) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	c.use()
	return c.Engine.Bulk(ctx, index, ops)
}

func (c *cutAtFirstUse) Get(ctx context.Context, index, id string) (search.Document, error) {
	c.use()
	return c.Engine.Get(ctx, index, id)
}

func (c *cutAtFirstUse) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	c.use()
	return c.Engine.Search(ctx, req)
}

func (c *cutAtFirstUse) Count(ctx context.Context, index string, q search.Query) (int64, error) {
	c.use()
	return c.Engine.Count(ctx, index, q)
}

func (c *cutAtFirstUse) Refresh(ctx context.Context, index string) error {
	c.use()
	return c.Engine.Refresh(ctx, index)
}

func (c *cutAtFirstUse) Ping(ctx context.Context) error {
	c.use()
	return c.Engine.(interface{ Ping(context.Context) error }).Ping(ctx)
}

// startCrashLoopIndexer is startIndexer on eng with the park threshold
// crashLoopMaxAttempts.
func (f *faultEnv) startCrashLoopIndexer(t *testing.T, ctx context.Context, name string, eng search.Engine) *runningIndexer {
	t.Helper()
	ictx, cancel := context.WithCancel(ctx)
	r := &runningIndexer{bus: f.connect(t, ctx, name), cancel: cancel, done: make(chan error, 1)}
	r.svc = indexer.New(r.bus, f.st, eng, nil, indexer.Options{Subject: f.prefix + indexer.DefaultSubject,
		RetryDelay: faultRetryDelay, AckWait: faultAckWait, Indexing: f.iopts,
		Retry: indexwriter.RetryPolicy{MaxAttempts: crashLoopMaxAttempts}})
	go func() { r.done <- r.svc.Run(ictx) }()
	return r
}

// pollFor polls cond every 20 ms until it holds, failing when ctx ends.
func pollFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
