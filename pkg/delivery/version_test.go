package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// callCounter counts the engine calls of a Delivery service: gets of the
// version document, gets of other documents, searches and counts.
type callCounter struct {
	search.Engine
	state                    string
	mu                       sync.Mutex
	versions, gets, searches int
}

func (c *callCounter) Get(ctx context.Context, index, id string) (search.Document, error) {
	c.mu.Lock()
	if index == c.state && id == indexdoc.VersionDocID {
		c.versions++
	} else {
		c.gets++
	}
	c.mu.Unlock()
	return c.Engine.Get(ctx, index, id)
}

func (c *callCounter) Search(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	c.mu.Lock()
	c.searches++
	c.mu.Unlock()
	return c.Engine.Search(ctx, req)
}

func (c *callCounter) Count(ctx context.Context, index string, q search.Query) (int64, error) {
	c.mu.Lock()
	c.searches++
	c.mu.Unlock()
	return c.Engine.Count(ctx, index, q)
}

func (c *callCounter) take() (versions, gets, searches int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	versions, gets, searches = c.versions, c.gets, c.searches
	c.versions, c.gets, c.searches = 0, 0, 0
	return versions, gets, searches
}

// TestUncachedListReadsTheVersionOnce: within delivery.OneVersion (one
// request) an uncached list reads the index version once, whoever asks
// for it (the response cache's fence, the branch, its model), and looks
// its branch up in the index once per index version: once warm, a list
// is one version read and one search (it was three version reads, a
// branch get and the search). A change moves the version: the branch is
// looked up again (a branch that takes the ApiIdentifier "draft" is
// found by it at once), then kept again. Outside OneVersion every
// operation on a branch reads it once as well (it read it for the branch
// and again for the model).
func TestUncachedListReadsTheVersionOnce(t *testing.T) {
	site := deliverytest.NewSite(t)
	cnt := &callCounter{Engine: site.Engine, state: site.Options.IndexPrefix + indexdoc.StateIndex}
	svc, err := delivery.New(delivery.Options{Search: cnt, Layout: site.Options.Layout})
	if err != nil {
		t.Fatal(err)
	}
	list := func(branch, filter string) delivery.List {
		t.Helper()
		rctx := delivery.OneVersion(context.Background())
		if _, err := svc.Version(rctx); err != nil { // the response cache's fence
			t.Fatal(err)
		}
		l, err := svc.List(rctx, delivery.Request{Branch: branch, Type: "webPage", Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	list("4", "") // loads the model
	cnt.take()
	for _, f := range []string{"price > 0", "price < 0", "price > 100"} {
		list("4", f)
		if v, g, s := cnt.take(); v != 1 || g != 0 || s != 1 {
			t.Errorf("list filtered %q: %d version reads, %d gets, %d searches; want 1, 0, 1", f, v, g, s)
		}
	}
	// Without OneVersion (a file stream's binary proxy lookup, the cache
	// tags of an eviction) an operation reads it once too: the branch
	// and its model see one version.
	bg := context.Background()
	for name, op := range map[string]func() error{
		"List": func() error {
			_, err := svc.List(bg, delivery.Request{Branch: "4", Type: "webPage", Filter: "price > 1"})
			return err
		},
		"Count": func() error { _, err := svc.Count(bg, delivery.Request{Branch: "4", Type: "webPage"}); return err },
		"BinaryProxy": func() error {
			if _, err := svc.BinaryProxy(bg, "4", "home"); err != nil && !errors.Is(err, delivery.ErrNotFound) {
				return err
			}
			return nil
		},
		"QueryTags":  func() error { _, err := svc.QueryTags(bg, delivery.Request{Branch: "4", Type: "webPage"}); return err },
		"ConfigTags": func() error { _, err := svc.ConfigTags(bg, "4"); return err },
		"Types":      func() error { _, err := svc.Types(bg, "4"); return err },
		"UpdateInfo": func() error { _, err := svc.UpdateInfo(bg, "4"); return err },
	} {
		cnt.take()
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, _, _ := cnt.take(); v != 1 {
			t.Errorf("%s outside OneVersion read the version %d times, want once", name, v)
		}
	}

	// A change: the branch is looked up again at the new version, and a
	// branch that just took the ApiIdentifier "draft" wins at once over
	// the alias (the default branch), as without the memo.
	if l := list("draft", ""); !slices.Contains(l.Tags, delivery.ModelTag(content.BranchDefault)) {
		t.Fatalf("draft lists with tags %v, want the default branch's", l.Tags)
	}
	parent, _ := json.Marshal(content.BranchDefault)
	b, _, err := site.Content.CreateBranch(ctx, content.Change{Caller: &auth.Principal{Name: "editor"}},
		[]content.ValueInput{{Attribute: content.AttrBranchParent, JSON: parent}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := site.Store.Begin(ctx, store.TxMeta{User: "import", Branch: content.BranchDefault})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := tx.GetObject(ctx, content.BranchDefault, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	obj.APIIdentifier = "draft"
	if err := tx.PutObjects(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	site.Publish(t)
	cnt.take()
	if l := list("draft", ""); !slices.Contains(l.Tags, delivery.ModelTag(b.ID)) {
		t.Errorf("after branch %d took the ApiIdentifier draft, draft lists with tags %v", b.ID, l.Tags)
	}
	cnt.take()
	list("draft", "price > 0")
	if v, g, s := cnt.take(); v != 1 || g != 0 || s != 1 {
		t.Errorf("list of draft at the new version: %d version reads, %d gets, %d searches; want 1, 0, 1", v, g, s)
	}
}
