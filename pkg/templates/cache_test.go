package templates

import (
	"context"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tagcache"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// cached is a world whose renders go through a render cache; the test
// hands the store's change events to the cache's invalidator itself (as
// the relay and the stream would, in commit order).
type cached struct {
	world
	st store.Store
	rc *rendercache.Cache
	iv *tagcache.Invalidator
	s  *Service
}

func newCached(t *testing.T, st store.Store) cached {
	t.Helper()
	if err := content.Bootstrap(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	w := newWorldOn(t, content.New(st, nil))
	rc := rendercache.New(memory.New(memory.Options{}), st, rendercache.Options{})
	iv := rc.Invalidator(nil, "test", st)
	if err := iv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return cached{world: w, st: st, rc: rc, iv: iv, s: New(w.c, Limits{}, nil).WithCache(rc)}
}

func (c cached) deliver(t *testing.T) {
	t.Helper()
	setups.DeliverOutbox(t, c.st, c.iv.Handle)
}

func (c cached) update(t *testing.T, id int64, vals ...content.ValueInput) {
	t.Helper()
	_, err := c.c.UpdateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "test", Admin: true}},
		[]content.ObjectInput{{ID: id, Values: vals}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRenderCache: a repeated render is a hit; a change to an object the
// render read through a reference shows in the very next render (the
// cache is not used while its invalidator lags the store) and evicts the
// entry; an unrelated change keeps it; a template change evicts too;
// another caller's visibility is another entry; renders that read a user
// object are not stored.
func TestRenderCache(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRenderCache(t, newCached(t, setups.SQLiteStore(t))) })
	t.Run("postgres", func(t *testing.T) { testRenderCache(t, newCached(t, setups.PostgresStore(t))) })
}

func testRenderCache(t *testing.T, c cached) {
	ctx := context.Background()
	admin := &auth.Principal{Name: "admin", Admin: true}
	tpl := c.template(t, "card", `{{value .Object "headline"}} by {{name (ref .Object "author")}}`)
	req := Request{Branch: "4", Template: tpl, Objects: ids(c.a1), Caller: admin}
	render := func(want string, hits int64) Result {
		t.Helper()
		res, err := c.s.Render(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.HTML) != want {
			t.Errorf("render: %q, want %q", res.HTML, want)
		}
		if got := c.s.CacheStats().Hits; got != hits {
			t.Errorf("hits %d, want %d (%+v)", got, hits, c.s.CacheStats())
		}
		return res
	}
	c.deliver(t)
	first := render("Hello by Ann", 0)
	again := render("Hello by Ann", 1)
	if again.ETag != first.ETag {
		t.Errorf("ETag %s from the cache, %s rendered", again.ETag, first.ETag)
	}

	// The referenced author changes: once the event is handled, the entry
	// is gone.
	c.update(t, c.ann, val(content.AttrName, content.LanguageEnUS, "Annie"))
	c.deliver(t)
	render("Hello by Annie", 1)
	render("Hello by Annie", 2)

	// Read your writes: the next render shows a change before its event
	// was handled (the cache is not used while it lags the store). That
	// render is stored at the change's transaction, so the change's own
	// eviction keeps it.
	c.update(t, c.ann, val(content.AttrName, content.LanguageEnUS, "Anja"))
	render("Hello by Anja", 2)
	c.deliver(t)
	render("Hello by Anja", 3)

	// A change to an object the render did not read keeps the entry.
	c.update(t, c.bob, val(content.AttrName, content.LanguageEnUS, "Robert"))
	c.deliver(t)
	render("Hello by Anja", 4)

	// A template change evicts.
	c.update(t, mustID(t, tpl), val(content.AttrTemplateSource, 0, `{{name (ref .Object "author")}}!`))
	c.deliver(t)
	render("Anja!", 4)
	render("Anja!", 5)

	// Another caller's visibility is another entry.
	req.Caller = &auth.Principal{Name: "reader", UserID: 12345}
	render("Anja!", 5)
	render("Anja!", 6)

	// A render that reads a user object is not stored.
	if _, err := c.c.EnsureUser(ctx, content.UserSpec{Name: "someone", Password: "a-long-password"}); err != nil {
		t.Fatal(err)
	}
	users, err := c.c.GetTypedObjects(ctx, "4", itoa(content.TypeUser), content.ListQuery{ReadOptions: content.ReadOptions{Caller: admin}, Take: 10})
	if err != nil || len(users.Objects) == 0 {
		t.Fatalf("users: %v %v", users, err)
	}
	who := c.template(t, "who", `{{(object "`+itoa(users.Objects[0].ID)+`").ID}}`)
	c.deliver(t)
	req = Request{Branch: "4", Template: who, Caller: admin}
	stored := c.s.CacheStats().Stored
	render(itoa(users.Objects[0].ID), 6)
	render(itoa(users.Objects[0].ID), 6)
	if got := c.s.CacheStats().Stored; got != stored {
		t.Errorf("a render that read a user object was stored (%d → %d)", stored, got)
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := content.ParseIdent(s)
	if err != nil {
		t.Fatal(err)
	}
	return id.ID
}

func itoa(n int64) string { return ids(n)[0] }

// TestCacheKey: every part of a request and the caller's visibility make
// another key; administrators share one, users each have theirs;
// parameter order does not matter.
func TestCacheKey(t *testing.T) {
	base := Request{Branch: "4", Template: "10", Objects: []string{"1", "2"}, Languages: []string{"de-DE"}, Variants: []string{"print"},
		Parameters: map[string]string{"a": "1", "b": "2"}, UICulture: "de-CH", Caller: &auth.Principal{Name: "x", Admin: true}}
	changes := map[string]func(*Request){
		"branch":     func(r *Request) { r.Branch = "5" },
		"template":   func(r *Request) { r.Template = "11" },
		"objects":    func(r *Request) { r.Objects = []string{"2", "1"} },
		"languages":  func(r *Request) { r.Languages = []string{"en-US"} },
		"variants":   func(r *Request) { r.Variants = nil },
		"parameters": func(r *Request) { r.Parameters = map[string]string{"a": "1", "b": "3"} },
		"uiCulture":  func(r *Request) { r.UICulture = "de-DE" },
		"hyphenate":  func(r *Request) { r.Hyphenate = true },
		"a user":     func(r *Request) { r.Caller = &auth.Principal{Name: "x", UserID: 7} },
		"no caller":  func(r *Request) { r.Caller = nil },
	}
	seen := map[string]string{cacheKey(base): "base"}
	for name, change := range changes {
		r := base
		change(&r)
		k := cacheKey(r)
		if prev, dup := seen[k]; dup {
			t.Errorf("%s: same key as %s", name, prev)
		}
		seen[k] = name
	}
	other := base
	other.Caller = &auth.Principal{Name: "another admin", Admin: true, UserID: 99}
	other.Parameters = map[string]string{"b": "2", "a": "1"}
	if cacheKey(other) != cacheKey(base) {
		t.Error("two administrators (or the parameter order) make different keys")
	}
	u1, u2 := base, base
	u1.Caller, u2.Caller = &auth.Principal{UserID: 7}, &auth.Principal{UserID: 8}
	if cacheKey(u1) == cacheKey(u2) {
		t.Error("two users share a key")
	}
}

// TestRenderTags: a render is tagged with the template, its objects (one
// asked for by GUID: tagged by the GUID too), the references it followed,
// the attributes it looked up by ApiIdentifier, the language list and
// the branch tree.
func TestRenderTags(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tpl := w.template(t, "tagged", `{{value .Object "headline"}} {{with ref .Object "author"}}{{name .}}{{end}}`)
	objs, err := w.c.GetObjects(ctx, "4", ids(w.a1), content.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	guid := objs[0].GUID
	_, tags, err := New(w.c, Limits{}, nil).render(ctx, Request{Branch: "4", Template: tpl, Objects: []string{guid}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{rendercache.ObjectTag(mustID(t, tpl)), rendercache.ObjectTag(w.a1), rendercache.IdentTag(guid),
		rendercache.ObjectTag(w.ann), rendercache.ObjectTag(w.person), rendercache.IdentTag("headline"), rendercache.IdentTag("author"),
		rendercache.TypeTag(content.TypeLanguage), rendercache.TypeTag(content.TypeBranch)} {
		if !slices.Contains(tags, want) {
			t.Errorf("tags %v lack %s", tags, want)
		}
	}
	if slices.Contains(tags, rendercache.ObjectTag(w.bob)) {
		t.Errorf("tags %v name bob, whom the render did not read", tags)
	}
}
