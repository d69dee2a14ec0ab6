package delivery

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/outbox"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/indexer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// TestChangeEventsEvictThroughTheStream runs the real pipeline in
// process: content write → outbox relay → JetStream → indexer, and the
// Delivery invalidator as its own consumer of the same stream. A cached
// answer changes only because the change event evicted it (the cache TTL
// is a day).
func TestChangeEventsEvictThroughTheStream(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	bus, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	relay := outbox.New(h.site.Store, bus, outbox.Options{Idle: 5 * time.Millisecond, MaxIdle: 20 * time.Millisecond})
	ix := indexer.New(bus, h.site.Store, h.site.Engine, nil, indexer.Options{RetryDelay: 50 * time.Millisecond, Indexing: h.site.Options})
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, run := range []func(context.Context) error{relay.Run, ix.Run, h.group.Invalidator(bus, "delivery-test").Run} {
		wg.Go(func() { errs <- run(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = bus.Close()
		close(errs)
		for err := range errs {
			if err != nil && !errors.Is(err, events.ErrClosed) && !errors.Is(err, context.Canceled) {
				t.Errorf("worker: %v", err)
			}
		}
	})

	req := &deliveryv1.GetRequest{Branch: "4", Id: "home"}
	var hdr metadata.MD
	first, err := h.client.Get(context.Background(), req, grpc.Header(&hdr))
	if err != nil || first.Obj.DisplayName != "Home" {
		t.Fatalf("first: %v %v", first, err)
	}
	oldTag := hdr.Get("etag")[0]
	if !h.cached(t, "Get", req) {
		t.Fatal("not cached")
	}
	h.rename(t, h.site.Home, "Home via stream")
	deadline := time.Now().Add(15 * time.Second)
	for h.cached(t, "Get", req) {
		if time.Now().After(deadline) {
			t.Fatal("the change event did not evict the cached answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := h.client.Get(context.Background(), req, grpc.Header(&hdr))
	if err != nil || got.Obj.DisplayName != "Home via stream" || hdr.Get("etag")[0] == oldTag {
		t.Fatalf("after eviction: %v %v etag %v (was %s)", got.GetObj().GetDisplayName(), err, hdr.Get("etag"), oldTag)
	}
}
