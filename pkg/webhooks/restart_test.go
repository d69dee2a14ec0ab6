package webhooks

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// A dispatcher stopped while its receiver is down loses nothing: the next
// one, on the same durable consumer, delivers every pending event in order.
func TestRestartLosesNothing(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		// The stopped dispatchers leave nothing running: lanes, consumers,
		// deliveries under way, their HTTP connections.
		testenv.CheckGoroutines(t, testenv.EmbeddedNATSConsumers...)
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		e.create(t, hook(rcv.srv.URL+"/all", "k"))
		rcv.down.Store(true)
		cfg := Config{Client: ClientSettings{AllowPrivate: true}, Retry: RetrySettings{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = New(e.st, e.bus, cfg).Run(ctx) }()
		var ids []int64
		for range 5 {
			ids = append(ids, e.create(t, objectOf(typ, "x"))[0])
		}
		time.Sleep(300 * time.Millisecond)
		cancel()
		<-done
		rcv.down.Store(false)
		e.dispatch(t, cfg)
		waitFor(t, "the pending events", func() bool {
			n := 0
			for _, p := range rcv.payloads("/all") {
				if slices.ContainsFunc(ids, func(id int64) bool { return slices.Contains(p.Event.ObjectIDs, id) }) {
					n++
				}
			}
			return n == len(ids)
		})
		var txs []int64
		for _, p := range rcv.payloads("/all") {
			txs = append(txs, p.Event.Transaction)
		}
		if !slices.IsSorted(txs) {
			t.Fatalf("delivered out of order: %v", txs)
		}
	})
}
