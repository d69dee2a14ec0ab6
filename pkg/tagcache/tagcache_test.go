package tagcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/events"
)

// TestStoreFences: an entry keeps its position; a lookup needing a later
// one misses; an eviction at a later position removes it and refuses
// answers built before it, not those built at or after it.
func TestStoreFences(t *testing.T) {
	ctx := context.Background()
	s := NewStore(memory.New(memory.Options{}), "test", nil)
	if !s.Put(ctx, "k", Entry{Body: []byte("v5"), ETag: `"e"`, At: 5}, []string{"t"}) {
		t.Fatal("not stored")
	}
	if e, ok := s.Get(ctx, "k", 5); !ok || string(e.Body) != "v5" || e.ETag != `"e"` || e.At != 5 {
		t.Fatalf("Get = %+v %v", e, ok)
	}
	if _, ok := s.Get(ctx, "k", 6); ok {
		t.Error("an entry built at 5 served a lookup needing 6")
	}
	if err := s.Invalidate(ctx, 7, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(ctx, "k", 0); ok {
		t.Error("evicted entry still served")
	}
	if s.Put(ctx, "k", Entry{Body: []byte("v6"), At: 6}, []string{"t"}) {
		t.Error("an answer built before the eviction was stored")
	}
	if !s.Put(ctx, "k", Entry{Body: []byte("v7"), At: 7}, []string{"t"}) {
		t.Error("an answer built at the eviction was refused")
	}
	if st := s.Stats(); st.Stored != 2 || st.Invalidations != 1 || st.EvictedTags != 1 {
		t.Errorf("stats %+v", st)
	}
	var none *Store
	if none.Put(ctx, "k", Entry{}, nil) || none.Enabled() {
		t.Error("a nil store stored")
	}
}

type fakeIndex struct {
	version int64
	waited  int64
	err     error
}

func (f *fakeIndex) Version(context.Context) (int64, error) { return f.version, nil }
func (f *fakeIndex) WaitForVersion(_ context.Context, v int64, _ time.Duration) (int64, error) {
	f.waited = v
	return v, f.err
}

// TestInvalidatorIndexFence: an event waits for its transaction in the
// index, then evicts the tags the domain names; a failed wait retries the
// event (an error) and evicts nothing; a malformed event is dropped.
func TestInvalidatorIndexFence(t *testing.T) {
	ctx := context.Background()
	s := NewStore(memory.New(memory.Options{}), "test", nil)
	s.Put(ctx, "k", Entry{Body: []byte("x"), At: 3}, []string{"o:1"})
	idx := &fakeIndex{err: errors.New("not yet")}
	iv := NewInvalidator(s, IndexFence{Index: idx}, func(context.Context, changes.Event) ([]string, error) {
		return []string{"o:1"}, nil
	}, nil, "test", "test")
	payload, _ := changes.Encode(changes.Event{Branch: 4, Transaction: 9, Kind: changes.KindUpdated, ObjectIDs: []int64{1}})
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err == nil || idx.waited != 9 {
		t.Fatalf("failed wait: err %v, waited for %d", err, idx.waited)
	}
	if _, ok := s.Get(ctx, "k", 0); !ok {
		t.Fatal("evicted before the index showed the transaction")
	}
	idx.err = nil
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(ctx, "k", 0); ok {
		t.Error("not evicted")
	}
	if err := iv.Handle(ctx, events.Msg{Data: []byte("{")}); err != nil {
		t.Errorf("malformed event: %v, want dropped", err)
	}
}

type fakeOutbox struct{ w int64 }

func (f *fakeOutbox) LastOutboxTransaction(context.Context, string) (int64, error) { return f.w, nil }

// TestOutboxFence: nothing is current or admitted before the start; after
// it, a lookup is current only once every event up to its position is
// applied, and answers built before the start are refused.
func TestOutboxFence(t *testing.T) {
	ctx := context.Background()
	ob := &fakeOutbox{w: 10}
	f := NewOutboxFence(ob)
	if f.Current(0) || f.Admits(10) {
		t.Fatal("current or admitting before the start")
	}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !f.Current(10) || f.Current(11) || !f.Admits(10) || f.Admits(9) {
		t.Errorf("after start at 10: current(10)=%v current(11)=%v admits(10)=%v admits(9)=%v",
			f.Current(10), f.Current(11), f.Admits(10), f.Admits(9))
	}
	f.Applied(12)
	f.Applied(11) // out of order: the position never goes back
	if f.Handled() != 12 || !f.Current(12) {
		t.Errorf("handled %d", f.Handled())
	}
}

// TestInvalidatorEarly: the early tags are evicted on receipt, before the
// index shows the event, and answers of them built meanwhile (at older
// positions) are refused; the other tags wait for the index as before.
func TestInvalidatorEarly(t *testing.T) {
	ctx := context.Background()
	s := NewStore(memory.New(memory.Options{}), "test", nil)
	s.Put(ctx, "list", Entry{Body: []byte("0"), At: 3}, []string{"list:4"})
	s.Put(ctx, "obj", Entry{Body: []byte("x"), At: 3}, []string{"o:1"})
	idx := &fakeIndex{version: 8, err: errors.New("not yet")}
	iv := NewInvalidator(s, IndexFence{Index: idx}, func(context.Context, changes.Event) ([]string, error) {
		return []string{"o:1", "list:4"}, nil
	}, nil, "test", "test").Early(func(context.Context, changes.Event) ([]string, error) {
		return []string{"list:4"}, nil
	})
	payload, _ := changes.Encode(changes.Event{Branch: 4, Transaction: 9, Kind: changes.KindUpdated, ObjectIDs: []int64{1}})
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err == nil {
		t.Fatal("the wait failed, but the event was handled")
	}
	if _, ok := s.Get(ctx, "list", 0); ok {
		t.Error("an early tag was not evicted on receipt")
	}
	if _, ok := s.Get(ctx, "obj", 0); !ok {
		t.Error("a tag evicted before the index showed the transaction")
	}
	if s.Put(ctx, "list", Entry{Body: []byte("0"), At: 8}, []string{"list:4"}) {
		t.Error("an answer built before the index showed the event was stored")
	}
	idx.err = nil
	if err := iv.Handle(ctx, events.Msg{Data: payload}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(ctx, "obj", 0); ok {
		t.Error("not evicted once the index showed the event")
	}
	if !s.Put(ctx, "list", Entry{Body: []byte("all"), At: 9}, []string{"list:4"}) {
		t.Error("an answer built at the event was refused")
	}
}
