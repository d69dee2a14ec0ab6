package rendercache

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tagcache"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// fixture is a cache over a real SQLite store whose change events the test
// hands to the invalidator itself, from the store's outbox, in order.
type fixture struct {
	st store.Store
	c  *content.Service
	rc *Cache
	iv *tagcache.Invalidator
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	st := setups.SQLiteStore(t)
	if err := content.Bootstrap(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	rc := New(memory.New(memory.Options{}), st, opts)
	return &fixture{st: st, c: content.New(st, nil), rc: rc, iv: rc.Invalidator(nil, "test", st)}
}

// deliver hands every pending change event of the outbox to the
// invalidator (the relay and the stream, in commit order).
func (f *fixture) deliver(t *testing.T) {
	t.Helper()
	setups.DeliverOutbox(t, f.st, f.iv.Handle)
}

func (f *fixture) create(t *testing.T, api, name string) int64 {
	t.Helper()
	v, _ := json.Marshal(name)
	return setups.CreateObject(t, f.c, typeArticle(t, f), api,
		content.ValueInput{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: v})
}

// typeArticle creates (once) a plain object type.
func typeArticle(t *testing.T, f *fixture) int64 {
	t.Helper()
	objs, err := f.c.GetObjects(context.Background(), "4", []string{"article"}, content.ReadOptions{})
	if err == nil {
		return objs[0].ID
	}
	v, _ := json.Marshal("Article")
	return setups.CreateObject(t, f.c, content.RootID, "article",
		content.ValueInput{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: v})
}

func (f *fixture) rename(t *testing.T, id int64, name string) {
	t.Helper()
	v, _ := json.Marshal(name)
	_, err := f.c.UpdateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "test", Admin: true}},
		[]content.ObjectInput{{ID: id, Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: v}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// lookup is Get that fails the test on an error.
func (f *fixture) lookup(t *testing.T, key string) (Entry, Ticket, bool) {
	t.Helper()
	e, tk, ok, err := f.rc.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return e, tk, ok
}

// TestServeOnlyWhenCurrent: nothing is served or stored before the start;
// an entry is served only while the invalidator has handled every change
// event the store committed, and a change to what it read evicts it.
func TestServeOnlyWhenCurrent(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	x := f.create(t, "x", "X")
	_, tk, ok := f.lookup(t, "k")
	if ok {
		t.Fatal("hit before the start")
	}
	f.rc.Put(ctx, tk, Entry{Body: []byte("early"), ETag: `"e"`}, []string{ObjectTag(x)})
	if st := f.rc.Stats(); st.Stored != 0 || st.Behind != 1 {
		t.Fatalf("before the start: %+v", st)
	}
	if err := f.iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Started at the newest change: current without handling the events
	// of the setup (they are older than anything stored from now on).
	_, tk, ok = f.lookup(t, "k")
	if ok {
		t.Fatal("hit on an empty cache")
	}
	f.rc.Put(ctx, tk, Entry{Body: []byte("X1"), ETag: `"1"`}, []string{ObjectTag(x)})
	if e, _, ok := f.lookup(t, "k"); !ok || string(e.Body) != "X1" || e.ETag != `"1"` {
		t.Fatalf("after Put: %q %v", e.Body, ok)
	}
	f.deliver(t) // the setup's events: older than the entry, nothing evicted
	if _, _, ok := f.lookup(t, "k"); !ok {
		t.Fatal("an event older than the entry evicted it")
	}

	// A change the invalidator has not handled yet: not served (the
	// caller renders the new state), though the entry is still there.
	f.rename(t, x, "X2")
	if _, _, ok := f.lookup(t, "k"); ok {
		t.Fatal("served while the invalidator lags the store")
	}
	f.deliver(t)
	if _, _, ok := f.lookup(t, "k"); ok {
		t.Fatal("the change to x did not evict the entry")
	}
	if st := f.rc.Stats(); st.Hits != 2 || st.Behind != 2 || st.Invalidations == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFence: an answer built before a change and stored after the change
// was handled is refused; one built after it is kept.
func TestFence(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	x := f.create(t, "x", "X")
	if err := f.iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_, old, _ := f.lookup(t, "k") // the build starts
	f.rename(t, x, "X2")          // a change lands while it builds
	f.deliver(t)
	f.rc.Put(ctx, old, Entry{Body: []byte("stale")}, []string{ObjectTag(x)})
	if _, _, ok := f.lookup(t, "k"); ok {
		t.Fatal("an answer built before the change was stored after it")
	}
	_, fresh, _ := f.lookup(t, "k")
	f.rc.Put(ctx, fresh, Entry{Body: []byte("fresh")}, []string{ObjectTag(x)})
	if e, _, ok := f.lookup(t, "k"); !ok || string(e.Body) != "fresh" {
		t.Fatal("an answer built after the change was not stored")
	}
}

// TestUnrelatedChangeKeeps: a change to an object an entry did not read
// keeps it; a job-like transaction without change event does not make
// the cache look behind.
func TestUnrelatedChangeKeeps(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	x, y := f.create(t, "x", "X"), f.create(t, "y", "Y")
	if err := f.iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_, tk, _ := f.lookup(t, "k")
	f.rc.Put(ctx, tk, Entry{Body: []byte("X")}, []string{ObjectTag(x)})
	f.rename(t, y, "Y2")
	f.deliver(t)
	tx, err := f.st.Begin(ctx, store.TxMeta{User: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.jobs.queue", MsgID: "j1"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := f.lookup(t, "k"); !ok {
		t.Fatalf("evicted or behind after unrelated writes: %+v", f.rc.Stats())
	}
}

// TestChangeTags: an event names its objects, their types and
// identifiers; comments touch nothing, a deleted branch every render.
func TestChangeTags(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	x := f.create(t, "someIdent", "X")
	objs, err := f.c.GetObjects(ctx, "4", []string{"someIdent"}, content.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tags, err := ChangeTags(ctx, f.st, changes.Event{Branch: content.BranchDefault, Transaction: 99, Kind: changes.KindUpdated, ObjectIDs: []int64{x}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ObjectTag(x), TypeTag(objs[0].TypeID), IdentTag("someIdent"), IdentTag(objs[0].GUID)} {
		if !slices.Contains(tags, want) {
			t.Errorf("tags %v lack %s", tags, want)
		}
	}
	if tags, _ := ChangeTags(ctx, f.st, changes.Event{Branch: 4, Transaction: 99, Kind: changes.KindComment, ObjectIDs: []int64{x}}); len(tags) != 0 {
		t.Errorf("comment: %v", tags)
	}
	tags, _ = ChangeTags(ctx, f.st, changes.Event{Branch: 7, Transaction: 99, Kind: changes.KindBranchDeleted})
	if !slices.Equal(tags, []string{TypeTag(content.TypeBranch)}) {
		t.Errorf("branch deleted: %v", tags)
	}
}

// TestLimits: an answer above MaxEntryBytes is not stored; a negative
// MaxBytes is no cache at all.
func TestLimits(t *testing.T) {
	f := newFixture(t, Options{MaxEntryBytes: 4})
	ctx := context.Background()
	if err := f.iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_, tk, _ := f.lookup(t, "big")
	f.rc.Put(ctx, tk, Entry{Body: []byte("12345")}, nil)
	_, tk, _ = f.lookup(t, "small")
	f.rc.Put(ctx, tk, Entry{Body: []byte("1234")}, nil)
	if _, _, ok := f.lookup(t, "big"); ok {
		t.Error("an answer above MaxEntryBytes was stored")
	}
	if _, _, ok := f.lookup(t, "small"); !ok {
		t.Error("an answer of MaxEntryBytes was not stored")
	}
	if New(nil, f.st, Options{}) != nil {
		t.Error("no storage built a cache")
	}
}

// TestGetOrBuild: a miss builds and stores with the build's tags, the next
// lookup is served without building; a failed build and one without tags
// are not stored; a nil Cache builds every time.
func TestGetOrBuild(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	x := f.create(t, "x", "X")
	if err := f.iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func(body string, tags []string, err error) func() (Entry, []string, error) {
		return func() (Entry, []string, error) {
			builds++
			return Entry{Body: []byte(body), ETag: `"` + body + `"`}, tags, err
		}
	}
	for i, want := range []int{1, 1} {
		e, err := f.rc.GetOrBuild(ctx, "k", build("X1", []string{ObjectTag(x)}, nil))
		if err != nil || string(e.Body) != "X1" || e.ETag != `"X1"` || builds != want {
			t.Fatalf("call %d: %q %q %v, %d builds", i, e.Body, e.ETag, err, builds)
		}
	}
	f.rename(t, x, "X2")
	f.deliver(t)
	if e, err := f.rc.GetOrBuild(ctx, "k", build("X2", []string{ObjectTag(x)}, nil)); err != nil || string(e.Body) != "X2" || builds != 2 {
		t.Fatalf("after the change: %q %v, %d builds", e.Body, err, builds)
	}

	failed := errors.New("build failed")
	if _, err := f.rc.GetOrBuild(ctx, "failing", build("F", []string{ObjectTag(x)}, failed)); !errors.Is(err, failed) {
		t.Fatalf("failed build: %v", err)
	}
	if _, err := f.rc.GetOrBuild(ctx, "private", build("P", nil, nil)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"failing", "private"} {
		if _, _, ok := f.lookup(t, k); ok {
			t.Fatalf("%s was stored", k)
		}
	}

	var none *Cache
	for i := range 2 {
		if e, err := none.GetOrBuild(ctx, "k", build("N", []string{ObjectTag(x)}, nil)); err != nil || string(e.Body) != "N" || builds != 4+i+1 {
			t.Fatalf("nil cache, call %d: %q %v, %d builds", i, e.Body, err, builds)
		}
	}
}
