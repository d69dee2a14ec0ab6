package indexer_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/services/indexer"
)

// killedVisibleBound is how soon after the restart of a killed indexer the
// writes it had not applied must be searchable, whether it was killed
// idle or while applying a batch.
const killedVisibleBound = 5 * time.Second

// killedBehind is how many transactions the indexer is behind when it is
// killed while applying a batch (as in the case measured in production).
const killedBehind = 14

// TestIndexerKilledVisibleWithin5s runs the indexer with its default ack
// wait (events.DefaultAckWait) on the real components, kills it (its
// connection vanishes under it: nothing is acked or released) and starts
// the next one with the same durable consumer at once:
//
//   - mid-batch: killed while it applies a batch, killedBehind transactions
//     behind, every one of them delivered to it and unacknowledged. The
//     server hands them to the next indexer only after the dead one's
//     ack wait: with the former 30 s, 23-29 s after the restart.
//   - idle: killed caught up; a write after the restart must be visible
//     at once.
//
// Either way the newest transaction must be searchable within
// killedVisibleBound of the restart.
func TestIndexerKilledVisibleWithin5s(t *testing.T) {
	natsURL := testenv.URL(t, testenv.NATSURL)
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	f := newFaultEnv(t, ctx, natsURL)
	t.Cleanup(func() { deleteStream(t, natsURL, f.stream.Name) })
	rctx, stopRelay := context.WithCancel(ctx)
	defer func() { stopRelay(); f.relayWG.Wait() }()
	f.startRelay(t, rctx)
	if _, _, err := f.svc.CreateBranch(ctx, editor, []content.ValueInput{
		vin(content.AttrName, content.LanguageEnUS, "Killed child"), vin(content.AttrBranchParent, 0, content.BranchDefault)}); err != nil {
		t.Fatal(err)
	}

	stalling := &stallEngine{Engine: f.eng, entered: make(chan struct{})}
	first := f.startDefaultIndexer(t, ctx, "killed-indexer-1", stalling)
	f.writeN(t, ctx, 3)
	f.waitVisible(t, ctx, first.svc, time.Minute)

	// Mid-batch: the next writes wait in a batch that never ends.
	stalling.stall.Store(true)
	f.writeN(t, ctx, killedBehind)
	select {
	case <-stalling.entered:
	case <-ctx.Done():
		t.Fatal("the indexer did not start applying a batch")
	}
	f.waitAckPending(t, ctx, first.bus.JetStream(), killedBehind)
	first.crash(t)
	second := f.startDefaultIndexer(t, ctx, "killed-indexer-2", f.eng)
	took := f.waitVisible(t, ctx, second.svc, time.Minute)
	t.Logf("mid-batch: killed %d transactions behind, all visible %v after the restart", killedBehind, took.Round(time.Millisecond))
	if took > killedVisibleBound {
		t.Errorf("mid-batch: visible %v after the restart, want at most %v", took.Round(time.Millisecond), killedVisibleBound)
	}

	// Idle: caught up (everything acknowledged) when killed.
	f.waitAckPending(t, ctx, second.bus.JetStream(), 0)
	second.crash(t)
	third := f.startDefaultIndexer(t, ctx, "killed-indexer-3", f.eng)
	restarted := time.Now()
	f.writeN(t, ctx, 1)
	f.waitVisible(t, ctx, third.svc, time.Minute)
	took = time.Since(restarted)
	t.Logf("idle: the write after the restart visible %v after it", took.Round(time.Millisecond))
	if took > killedVisibleBound {
		t.Errorf("idle: visible %v after the restart, want at most %v", took.Round(time.Millisecond), killedVisibleBound)
	}
	third.stop(t)
}

// stallEngine blocks Bulk, once stall is set, until its context ends
// (an Apply that never finishes); entered is closed when the first one
// blocks.
type stallEngine struct {
	search.Engine
	stall   atomic.Bool
	once    sync.Once
	entered chan struct{}
}

func (e *stallEngine) Bulk(ctx context.Context, index string, ops []search.Op) (search.BulkResult, error) {
	if e.stall.Load() {
		e.once.Do(func() { close(e.entered) })
		<-ctx.Done()
		return search.BulkResult{}, ctx.Err()
	}
	return e.Engine.Bulk(ctx, index, ops)
}

// startDefaultIndexer is startIndexer on eng with the indexer's default
// ack wait.
func (f *faultEnv) startDefaultIndexer(t *testing.T, ctx context.Context, name string, eng search.Engine) *runningIndexer {
	t.Helper()
	ictx, cancel := context.WithCancel(ctx)
	r := &runningIndexer{bus: f.connect(t, ctx, name), cancel: cancel, done: make(chan error, 1)}
	r.svc = indexer.New(r.bus, f.st, eng, nil, indexer.Options{Subject: f.prefix + indexer.DefaultSubject,
		RetryDelay: faultRetryDelay, Indexing: f.iopts})
	go func() { r.done <- r.svc.Run(ictx) }()
	return r
}

// writeN makes n creates.
func (f *faultEnv) writeN(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for i := range n {
		if _, _, err := f.svc.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.TypeLanguage,
			Values: []content.ValueInput{vin(content.AttrName, content.LanguageEnUS, fmt.Sprint("Killed ", i))}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitVisible waits (at most wait) until svc has applied the newest
// transaction and returns how long that took.
func (f *faultEnv) waitVisible(t *testing.T, ctx context.Context, svc *indexer.Service, wait time.Duration) time.Duration {
	t.Helper()
	head, err := f.st.LastTransactionID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if v, err := svc.Indexer().WaitForVersion(ctx, head, wait); err != nil {
		t.Fatalf("indexer at version %d of %d after %v: %v", v, head, time.Since(start).Round(time.Millisecond), err)
	}
	return time.Since(start)
}

// waitAckPending waits until the indexer's durable consumer has n
// deliveries unacknowledged.
func (f *faultEnv) waitAckPending(t *testing.T, ctx context.Context, js jetstream.JetStream, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := js.Consumer(ctx, f.stream.Name, indexer.DefaultDurable)
		var ci *jetstream.ConsumerInfo
		if err == nil {
			ci, err = c.Info(ctx)
		}
		if err == nil && ci.NumAckPending == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer: want %d unacknowledged, got %+v, %v", n, ci, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
