// Package deliverytest builds published content through the real
// pipeline for Delivery tests: pkg/content writes on SQLite, the outbox
// events applied by pkg/indexwriter to a search engine (in-memory Bleve, or
// Elasticsearch from CMS_ELASTICSEARCH_URL), and a delivery.Service
// reading that index.
package deliverytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/indexwriter"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/search/bleve"
	"github.com/cmsplatform/cms/pkg/search/elastic"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// Site is a small web site: pages referencing modules, modules
// referencing teasers and images.
type Site struct {
	Svc     *delivery.Service
	Content *content.Service
	Store   store.Store
	Index   *indexwriter.Indexer
	Engine  search.Engine
	Options indexwriter.Options

	// Types and attributes.
	WebPage, Module, Image           int64
	NavTitle, ModuleRefs, ImageRef   int64
	Price, HTML, Keywords, Published int64
	PageForm                         int64
	// Objects: Home (apiIdentifier "home") → modules M1, M2; M1 → Img;
	// About; a de-DE only page DeOnly.
	Home, About, M1, M2, Img, DeOnly int64
}

var editor = content.Change{Caller: &auth.Principal{Name: "editor"}}

func val(attr, lang int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

func multi(attr int64, vs ...any) []content.ValueInput {
	out := make([]content.ValueInput, len(vs))
	for i, v := range vs {
		b, _ := json.Marshal(v)
		sr := int64(i)
		out[i] = content.ValueInput{Attribute: attr, SortReverse: &sr, JSON: b}
	}
	return out
}

func ptr(s string) *string { return &s }

// Engine makes the search engine a Site indexes into.
type Engine struct {
	Name string
	// New returns a fresh engine (and the index options to use with it),
	// cleaned up when the test ends; it skips (locally) or fails (CI)
	// when its server is not configured.
	New func(t testing.TB) (search.Engine, indexwriter.Options)
}

// Engines are the embedded (Bleve, in memory) and distributed
// (Elasticsearch from CMS_ELASTICSEARCH_URL) engines.
func Engines() []Engine {
	return []Engine{
		{Name: "bleve", New: func(t testing.TB) (search.Engine, indexwriter.Options) {
			eng, err := bleve.New("")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = eng.Close() })
			return eng, indexwriter.Options{}
		}},
		{Name: "elastic", New: func(t testing.TB) (search.Engine, indexwriter.Options) {
			url := testenv.URL(t, testenv.ElasticsearchURL)
			b := make([]byte, 5)
			_, _ = rand.Read(b)
			opts := indexwriter.Options{Layout: indexdoc.Layout{IndexPrefix: "dlv" + hex.EncodeToString(b) + "-"}}
			eng, err := elastic.New(url, elastic.WithPrefix("cmstest-"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, n := range []string{indexdoc.ObjectsIndex, indexdoc.StateIndex} {
					_ = eng.DeleteIndex(context.Background(), opts.IndexPrefix+n)
				}
				_ = eng.Close()
			})
			return eng, opts
		}},
	}
}

// NewSite builds the site on an in-memory Bleve index.
func NewSite(t testing.TB) *Site { return NewSiteOn(t, Engines()[0]) }

// OnEachEngine runs fn as one subtest per engine (Engines), each on a
// fresh site (NewSiteOn).
func OnEachEngine(t *testing.T, fn func(t *testing.T, s *Site)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) { fn(t, NewSiteOn(t, e)) })
	}
}

// NewSiteOn builds the site on the engine e makes and returns it with its
// Delivery service.
func NewSiteOn(t testing.TB, e Engine) *Site {
	t.Helper()
	ctx := context.Background()
	eng, opts := e.New(t)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	s := &Site{Content: content.New(st, nil), Store: st, Engine: eng, Options: opts}
	if s.Index, err = indexwriter.New(st, eng, s.Options); err != nil {
		t.Fatal(err)
	}
	create := func(in ...content.ObjectInput) []int64 {
		t.Helper()
		_, ids, err := s.Content.CreateObjects(ctx, "4", editor, in)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	attr := func(api, dt string, isMulti, langDep bool) content.ObjectInput {
		return content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: ptr(api), Values: []content.ValueInput{
			val(1000, 201, api), val(1001, 0, dt), val(1004, 0, isMulti), val(1017, 0, langDep)}}
	}
	ids := create(
		attr("navigationTitle", "String", false, true), attr("moduleRefs", "ObjRef", true, false),
		attr("imageRef", "ObjRef", false, false), attr("price", "Decimal", false, false),
		attr("htmlContent", "XmlRef.SimpleHtml", false, false), attr("seoKeywords", "String", true, false),
		attr("published", "DateTime", false, false))
	s.NavTitle, s.ModuleRefs, s.ImageRef, s.Price, s.HTML, s.Keywords, s.Published =
		ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	ids = create(content.ObjectInput{TypeID: content.TypeForm, Values: append([]content.ValueInput{val(1000, 201, "Page form")},
		multi(5053, s.NavTitle, s.ModuleRefs, s.HTML, s.Keywords, s.Price, s.Published)...)})
	s.PageForm = ids[0]
	ids = create(
		content.ObjectInput{TypeID: content.RootID, APIIdentifier: ptr("webPage"), Values: []content.ValueInput{
			val(1000, 201, "Web page"), val(5001, 0, s.PageForm)}},
		content.ObjectInput{TypeID: content.RootID, APIIdentifier: ptr("module"), Values: []content.ValueInput{val(1000, 201, "Module")}},
		content.ObjectInput{TypeID: content.RootID, APIIdentifier: ptr("image"), Values: []content.ValueInput{val(1000, 201, "Image")}})
	s.WebPage, s.Module, s.Image = ids[0], ids[1], ids[2]
	s.Img = create(content.ObjectInput{TypeID: s.Image, Values: []content.ValueInput{val(1000, 201, "Photo")}})[0]
	ids = create(
		content.ObjectInput{TypeID: s.Module, Values: []content.ValueInput{val(1000, 201, "Teaser"), val(s.ImageRef, 0, s.Img),
			val(s.HTML, 0, `<div xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></div>`)}},
		content.ObjectInput{TypeID: s.Module, Values: []content.ValueInput{val(1000, 201, "Text"), val(s.ImageRef, 0, s.Img)}})
	s.M1, s.M2 = ids[0], ids[1]
	ids = create(
		content.ObjectInput{TypeID: s.WebPage, APIIdentifier: ptr("home"), Values: append([]content.ValueInput{
			val(1000, 201, "Home"), val(1000, 202, "Startseite"), val(s.NavTitle, 201, "Home nav"),
			val(s.Price, 0, 19.5), val(s.Published, 0, "2024-05-01T10:00:00Z"),
			val(s.HTML, 0, `<div xmlns="http://www.w3.org/1999/xhtml"><p>Welcome home</p></div>`)},
			append(multi(s.ModuleRefs, s.M1, s.M2), multi(s.Keywords, "GRID Industries")...)...)},
		content.ObjectInput{TypeID: s.WebPage, Values: []content.ValueInput{val(1000, 201, "About us"),
			val(s.Price, 0, -25), val(s.Published, 0, "2023-01-01T00:00:00Z"), val(s.ModuleRefs, 0, s.M2)}},
		content.ObjectInput{TypeID: s.WebPage, Values: []content.ValueInput{val(1000, 202, "Nur Deutsch")}})
	s.Home, s.About, s.DeOnly = ids[0], ids[1], ids[2]
	s.Publish(t)
	if s.Svc, err = delivery.New(delivery.Options{Search: eng, Layout: s.Options.Layout}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Publish applies every pending outbox event to the index.
func (s *Site) Publish(t testing.TB) { t.Helper(); s.PublishThen(t, nil) }

// PublishThen is Publish that calls after with each payload once it is
// applied (e.g. a cache invalidator's handler).
func (s *Site) PublishThen(t testing.TB, after func(payload []byte)) {
	t.Helper()
	ctx := context.Background()
	evs, err := s.Store.ClaimOutbox(ctx, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if _, err := s.Index.ApplyPayload(ctx, e.Payload); err != nil {
			t.Fatal(fmt.Errorf("apply %s: %w", e.Payload, err))
		}
		if after != nil {
			after(e.Payload)
		}
	}
	if len(evs) > 0 {
		if err := s.Store.AckOutbox(ctx, outboxIDs(evs)); err != nil {
			t.Fatal(err)
		}
	}
}

func outboxIDs(evs []store.OutboxEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// Case is one test, run on a fresh site.
type Case struct {
	Name string
	Fn   func(*testing.T, *Site)
}

// Run runs every case on a fresh site of each engine: Bleve always,
// Elasticsearch when CMS_ELASTICSEARCH_URL is set.
func Run(t *testing.T, cases ...Case) {
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) { c.Fn(t, NewSiteOn(t, e)) })
			}
		})
	}
}
