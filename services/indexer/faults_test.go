package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/indexer"
)

// Fault tests: faultWrites writes stream through pkg/content (PostgreSQL) →
// outbox relay → NATS JetStream → indexer → Elasticsearch while a fault is
// injected midway; after recovery the index must equal a rebuild from the
// store (nothing missing, nothing stale, no deleted object back). Each is
// bounded to two minutes.

// The timing knobs: nothing in these tests waits for a fixed time except
// the injected outage itself; what waits for the system is bounded by
// these, chosen short because one Apply takes milliseconds here.
const (
	// faultWrites: enough that the fault lands while events are pending
	// on both sides of it (150 before, 150 after) with creates, updates on
	// two branches and deletes mixed. The catch-up after the last write is
	// bound by the indexer's throughput (one Apply with its index refresh
	// per event, ~25 ms on a loaded CI machine), not by waiting: 1,000
	// writes made each test spend 25-35 s there.
	faultWrites  = 300
	faultTimeout = 2 * time.Minute
	// faultAckWait: how long a crashed consumer's in-flight message stays
	// pending before JetStream redelivers it to the next indexer.
	faultAckWait = time.Second
	// faultRetryDelay: how long a failed event waits before redelivery.
	faultRetryDelay = 50 * time.Millisecond
	// faultReconnectWait: how long a client waits between reconnect
	// attempts (nats.go's default is 2 s, per client, after a restart).
	faultReconnectWait = 50 * time.Millisecond
	// faultNATSDown: how long the restarted NATS server stays down.
	faultNATSDown = 200 * time.Millisecond
)

// faultEnv is the pipeline without its indexer, which the test runs.
type faultEnv struct {
	st      *postgres.Store
	svc     *content.Service
	eng     search.Engine
	iopts   indexwriter.Options
	natsURL string
	// esURL and esPrefix: where eng writes (another engine on them, e.g.
	// through a fault proxy, sees the same indexes).
	esURL, esPrefix string
	stream          events.StreamConfig
	prefix          string // subject prefix of this test
	relayWG         sync.WaitGroup
}

func newFaultEnv(t *testing.T, ctx context.Context, natsURL string) *faultEnv {
	t.Helper()
	pgURL := freshDatabase(t)
	esURL := testenv.URL(t, testenv.ElasticsearchURL)
	id := uniq()
	st, err := postgres.Open(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	esPrefix := "cmstest-fault-" + id + "-"
	eng, err := elastic.New(esURL, elastic.WithPrefix(esPrefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = eng.Close()
		testenv.DeleteIndexes(t, esURL, esPrefix)
	})
	f := &faultEnv{st: st, svc: content.New(st, nil), eng: eng, iopts: indexwriter.Options{Layout: indexdoc.Layout{IndexPrefix: "cms-"}},
		natsURL: natsURL, prefix: "flt" + id + ".", esURL: esURL, esPrefix: esPrefix}
	f.stream = events.StreamConfig{Name: "FAULTTEST_" + id, Subjects: []string{f.prefix + "cms.changes.>"}}
	return f
}

// connect opens a NATS connection of its own (one per component, as in a
// distributed deployment).
func (f *faultEnv) connect(t *testing.T, ctx context.Context, name string) *natsjs.Bus {
	t.Helper()
	bus, err := natsjs.Connect(ctx, f.natsURL, natsjs.Options{Stream: f.stream, Name: name,
		NATSOptions: []nats.Option{nats.ReconnectWait(faultReconnectWait), nats.ReconnectJitter(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return bus
}

// startRelay runs the outbox relay until ctx ends.
func (f *faultEnv) startRelay(t *testing.T, ctx context.Context) *outbox.Relay {
	bus := f.connect(t, ctx, "fault-relay")
	r := outbox.New(f.st, prefixPublisher{bus, f.prefix}, outbox.Options{Idle: 5 * time.Millisecond, MaxIdle: 50 * time.Millisecond})
	f.relayWG.Go(func() {
		defer bus.Close()
		if err := r.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("relay: %v", err)
		}
	})
	return r
}

// runningIndexer is one indexer process: its own connection and context.
type runningIndexer struct {
	bus    *natsjs.Bus
	svc    *indexer.Service
	cancel context.CancelFunc
	done   chan error
}

func (f *faultEnv) startIndexer(t *testing.T, ctx context.Context, name string) *runningIndexer {
	t.Helper()
	ictx, cancel := context.WithCancel(ctx)
	r := &runningIndexer{bus: f.connect(t, ctx, name), cancel: cancel, done: make(chan error, 1)}
	r.svc = indexer.New(r.bus, f.st, f.eng, nil, indexer.Options{Subject: f.prefix + indexer.DefaultSubject,
		RetryDelay: faultRetryDelay, AckWait: faultAckWait, Indexing: f.iopts})
	go func() { r.done <- r.svc.Run(ictx) }()
	return r
}

// crash kills the indexer the hard way: its connection is closed under
// the running consumer (an in-flight event is neither acked nor nak'ed and
// comes back after AckWait), then its context ends.
func (r *runningIndexer) crash(t *testing.T) {
	t.Helper()
	r.bus.Conn().Close()
	r.cancel()
	select {
	case <-r.done: // an error is expected: the connection vanished
	case <-time.After(30 * time.Second):
		t.Fatal("crashed indexer did not stop")
	}
	_ = r.bus.Close()
}

func (r *runningIndexer) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil && !errors.Is(err, events.ErrClosed) {
		t.Errorf("indexer: %v", err)
	}
	_ = r.bus.Close()
}

// load is the write history and what it left behind.
type load struct {
	child   int64
	deleted []int64
	live    []int64
}

// write makes faultWrites single-operation transactions: creates, updates
// (on the default branch and on a child branch, which inherits the rest)
// and deletes, and calls midway() after half of them.
func (f *faultEnv) write(t *testing.T, ctx context.Context, midway func()) load {
	t.Helper()
	var l load
	child, _, err := f.svc.CreateBranch(ctx, editor, []content.ValueInput{
		vin(content.AttrName, content.LanguageEnUS, "Fault child"), vin(content.AttrBranchParent, 0, content.BranchDefault)})
	if err != nil {
		t.Fatal(err)
	}
	l.child = child.ID
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 1; i < faultWrites; i++ { // the branch was write 0
		if i == faultWrites/2 {
			midway()
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 5 || len(l.live) < 10:
			var ids []int64
			_, ids, err = f.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
				Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("Object ", i))}}})
			l.live = append(l.live, ids...)
		case op < 8:
			branch := "4"
			if op == 7 {
				branch = strconv.FormatInt(l.child, 10)
			}
			_, err = f.svc.UpdateObjects(ctx, branch, editor, []content.ObjectInput{{ID: l.live[rng.IntN(len(l.live))],
				Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("Update ", i, " on ", branch))}}})
		default:
			k := rng.IntN(len(l.live))
			id := l.live[k]
			l.live = append(l.live[:k], l.live[k+1:]...)
			_, _, err = f.svc.DeleteObjects(ctx, "4", editor, []string{strconv.FormatInt(id, 10)})
			l.deleted = append(l.deleted, id)
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	return l
}

// verify waits until the indexer has applied the newest transaction, then
// compares the index with a rebuild of the store into a second alias.
func (f *faultEnv) verify(t *testing.T, ctx context.Context, ix *indexwriter.Indexer, l load) {
	t.Helper()
	head, err := f.st.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if v, err := ix.WaitForVersion(ctx, head, time.Until(deadline(ctx))); err != nil {
		t.Fatalf("indexer did not catch up: version %d of %d: %v", v, head, err)
	}
	t.Logf("caught up with transaction %d %s after the last write", head, time.Since(start).Round(time.Millisecond))
	ref, err := indexwriter.New(f.st, f.eng, indexwriter.Options{Layout: indexdoc.Layout{IndexPrefix: "ref-"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Rebuild(ctx, f.st.LastTransactionID, nil); err != nil {
		t.Fatalf("reference rebuild: %v", err)
	}
	got, want := f.docs(t, ctx, ix.ObjectsIndex()), f.docs(t, ctx, ref.ObjectsIndex())
	if len(want) < 2*len(l.live) {
		t.Fatalf("reference has %d documents for %d live objects on 2 branches", len(want), len(l.live))
	}
	var missing, stale, extra int
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			missing++
			if missing <= 5 {
				t.Errorf("missing document %s", id)
			}
		case g.src != w.src:
			stale++
			if stale <= 5 {
				t.Errorf("stale document %s:\n got  %.200s\n want %.200s", id, g.src, w.src)
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra++
			if extra <= 5 {
				t.Errorf("document %s is not in the store", id)
			}
		}
	}
	for _, id := range l.deleted {
		for _, b := range []int64{content.BranchDefault, l.child} {
			if g, ok := got[indexdoc.DocID(b, id)]; !ok || !strings.Contains(g.src, `"deleted":true`) {
				t.Errorf("deleted object %d on branch %d: indexed %v, source %.200s; want it indexed as deleted", id, b, ok, g.src)
			}
		}
	}
	t.Logf("index: %d documents (reference %d), %d deleted objects; missing %d, stale %d, extra %d",
		len(got), len(want), len(l.deleted), missing, stale, extra)
}

type faultDoc struct {
	src     string
	version int64
}

func (f *faultEnv) docs(t *testing.T, ctx context.Context, index string) map[string]faultDoc {
	t.Helper()
	if err := f.eng.Refresh(ctx, index); err != nil {
		t.Fatal(err)
	}
	r, err := f.eng.Search(ctx, search.SearchRequest{Index: index, Size: search.MaxResultWindow})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != int64(len(r.Hits)) {
		t.Fatalf("%s: %d of %d documents fetched", index, len(r.Hits), r.Total)
	}
	out := make(map[string]faultDoc, len(r.Hits))
	for _, h := range r.Hits {
		src, _ := h.Fields[indexdoc.FieldSource].(string)
		// Versions must match the state: the source's last transaction is
		// never newer than the document's version.
		if s, err := indexdoc.DecodeSource(h.Fields); err != nil || s.LastTransaction > h.Version {
			t.Errorf("%s: document %s version %d, source %+v, %v", index, h.ID, h.Version, s.LastTransaction, err)
		}
		out[h.ID] = faultDoc{src: src, version: h.Version}
	}
	return out
}

// faultAfterApplied is how many events the indexer has applied when the
// fault strikes: it is then consuming, with more events pending.
const faultAfterApplied = 20

// busy waits until the indexer is consuming (faultAfterApplied events
// applied) and returns its version, so the fault lands mid-stream however
// fast the writes are.
func busy(t *testing.T, ctx context.Context, ix *indexwriter.Indexer) int64 {
	t.Helper()
	v, err := ix.WaitForVersion(ctx, faultAfterApplied, time.Until(deadline(ctx)))
	if err != nil {
		t.Fatalf("indexer did not start consuming: version %d: %v", v, err)
	}
	return v
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// TestFaultIndexerKilled crashes the indexer halfway through the writes
// and starts a new one with the same durable consumer.
func TestFaultIndexerKilled(t *testing.T) {
	natsURL := testenv.URL(t, testenv.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	f := newFaultEnv(t, ctx, natsURL)
	t.Cleanup(func() { deleteStream(t, natsURL, f.stream.Name) })
	rctx, stopRelay := context.WithCancel(ctx)
	defer func() { stopRelay(); f.relayWG.Wait() }()
	f.startRelay(t, rctx)
	first := f.startIndexer(t, ctx, "fault-indexer-1")
	var second *runningIndexer
	start := time.Now()
	l := f.write(t, ctx, func() {
		v := busy(t, ctx, first.svc.Indexer())
		first.crash(t)
		t.Logf("indexer killed at version %d after %s", v, time.Since(start).Round(time.Millisecond))
		second = f.startIndexer(t, ctx, "fault-indexer-2")
	})
	t.Logf("%d writes in %s", faultWrites, time.Since(start).Round(time.Millisecond))
	f.verify(t, ctx, second.svc.Indexer(), l)
	t.Logf("first indexer %+v, second %+v", first.svc.Stats(), second.svc.Stats())
	second.stop(t)
}

// TestFaultNATSRestart restarts the NATS server halfway through the
// writes: a real nats-server (nats-server/v2, the code of the binary) run
// in process with JetStream on a file store, shut down and started again
// on the same port and store directory. CI's shared NATS cannot be
// restarted by a test; PostgreSQL and Elasticsearch are the real ones.
func TestFaultNATSRestart(t *testing.T) {
	testenv.URL(t, testenv.PostgresURL) // skip locally / fail in CI like the others
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	srv := newNATS(t, t.TempDir())
	f := newFaultEnv(t, ctx, srv.url)
	rctx, stopRelay := context.WithCancel(ctx)
	defer func() { stopRelay(); f.relayWG.Wait() }()
	f.startRelay(t, rctx)
	ix := f.startIndexer(t, ctx, "fault-indexer")
	start := time.Now()
	l := f.write(t, ctx, func() {
		v := busy(t, ctx, ix.svc.Indexer())
		down := time.Now()
		srv.restart(t, faultNATSDown)
		t.Logf("NATS restarted at version %d after %s (down %s)", v, time.Since(start).Round(time.Millisecond),
			time.Since(down).Round(time.Millisecond))
	})
	t.Logf("%d writes in %s", faultWrites, time.Since(start).Round(time.Millisecond))
	f.verify(t, ctx, ix.svc.Indexer(), l)
	t.Logf("indexer %+v", ix.svc.Stats())
	ix.stop(t)
}

// testNATS is an in-process nats-server with JetStream on disk.
type testNATS struct {
	opts server.Options
	srv  *server.Server
	url  string
}

func newNATS(t *testing.T, dir string) *testNATS {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	n := &testNATS{opts: server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true}, url: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	n.start(t)
	t.Cleanup(func() {
		if n.srv != nil {
			n.srv.Shutdown()
			n.srv.WaitForShutdown()
		}
	})
	return n
}

func (n *testNATS) start(t *testing.T) {
	t.Helper()
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	n.srv = srv
}

// restart shuts the server down, waits, and starts it again on the same
// port and store directory.
func (n *testNATS) restart(t *testing.T, down time.Duration) {
	t.Helper()
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
	time.Sleep(down)
	n.start(t)
}
