package responsecache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
)

// fakeSource answers the invalidator like the Delivery domain would.
type fakeSource struct {
	waitedFor int64
	waitErr   error
	tags      []string
}

func (s *fakeSource) WaitForVersion(_ context.Context, v int64, _ time.Duration) (int64, error) {
	s.waitedFor = v
	return v, s.waitErr
}

func (s *fakeSource) Version(context.Context) (int64, error) { return s.waitedFor, nil }

func (s *fakeSource) ChangeTags(context.Context, changes.Event) ([]string, error) { return s.tags, nil }

// TestInvalidatorHandle: an event waits for its transaction in the index,
// then evicts the tags the source names (fenced at the transaction); a
// malformed event is dropped, a failed wait retries the event.
func TestInvalidatorHandle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.version.Store(5)
	if _, _, err := f.serve(ctx, "a", 0, "old", "t1"); err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{tags: []string{"t1"}}
	iv := f.c.Invalidator(nil, "test", src)
	payload, _ := changes.Encode(changes.Event{Branch: 4, Transaction: 7, Kind: changes.KindUpdated, ObjectIDs: []int64{1}})
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err != nil {
		t.Fatal(err)
	}
	if src.waitedFor != 7 {
		t.Errorf("waited for version %d, want 7", src.waitedFor)
	}
	if out, _, _ := f.serve(ctx, "a", 0, "new", "t1"); out.Value != "new" {
		t.Fatalf("after the event: %q, want a rebuild", out.Value)
	}
	// A build at 5 finishing after the invalidation at 7 is not stored.
	if _, _, _ = f.serve(ctx, "b", 0, "late", "t1"); f.builds.Load() != 3 {
		t.Fatal("setup")
	}
	if _, _, _ = f.serve(ctx, "b", 0, "late", "t1"); f.builds.Load() != 4 {
		t.Error("an answer built before the invalidation was stored")
	}
	if st := f.c.Stats(); st.Invalidations != 1 || st.EvictedTags != 1 {
		t.Errorf("stats %+v", st)
	}
	if err := iv.Handle(ctx, events.Msg{Data: []byte("{")}); err != nil {
		t.Errorf("malformed event: %v, want it dropped", err)
	}
	src.waitErr = errors.New("not yet")
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err == nil {
		t.Error("a failed wait acked the event")
	}
}
