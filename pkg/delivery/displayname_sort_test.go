package delivery_test

import (
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestSortByDisplayNameFollowsFallback: sort=displayName orders objects by
// the display name rendered in the request's language, which falls back
// along the language chain (de-DE → en-US → language-independent), on
// each engine (Bleve; Elasticsearch when CMS_ELASTICSEARCH_URL is set).
func TestSortByDisplayNameFollowsFallback(t *testing.T) {
	deliverytest.OnEachEngine(t, func(t *testing.T, s *deliverytest.Site) {
		// The fixture's pages in de-DE: "About us" (en-US only, the
		// fallback), "Nur Deutsch", "Startseite".
		l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "webPage", Lang: "de-DE", Sort: "displayName"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(l.Objs), []int64{s.About, s.DeOnly, s.Home}; !slices.Equal(got, want) {
			t.Errorf("webPage lang=de-DE sort=displayName = %v, want %v (About, DeOnly, Home)", got, want)
		}
		article := addArticles(t, s)
		for _, c := range []struct {
			lang, sort string
			want       []string // rendered display names in order; "" = none
		}{
			// The end-to-end report: named in en-US only, asked in de-DE.
			{"de-DE", "displayName desc", []string{"Zulu DE", "Gamma", "Echo", "Delta", "Charlie", "Beta", "Alpha"}},
			{"de-DE", "displayName asc", []string{"Alpha", "Beta", "Charlie", "Delta", "Echo", "Gamma", "Zulu DE"}},
			{"de-DE", "displayName", []string{"Alpha", "Beta", "Charlie", "Delta", "Echo", "Gamma", "Zulu DE"}},
			// en-US has no fallback: the de-DE only names are not shown
			// and sort last in both directions (ties by id).
			{"en-US", "displayName asc", []string{"Alpha", "Charlie", "Gamma", "yankee", "Zulu", "", ""}},
			{"en-US", "displayName desc", []string{"Zulu", "yankee", "Gamma", "Charlie", "Alpha", "", ""}},
		} {
			t.Run(c.lang+" "+c.sort, func(t *testing.T) {
				l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "article", Lang: c.lang, Sort: c.sort,
					Props: delivery.PropsNone, Take: 100})
				if err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(l.Objs))
				for i, o := range l.Objs {
					got[i] = o.DisplayName
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("displayName order = %q, want %q", got, c.want)
				}
				// The order is the order of the rendered names
				// (case-insensitive), whatever the fixture says.
				named := slices.Clone(got)
				for len(named) > 0 && named[len(named)-1] == "" {
					named = named[:len(named)-1]
				}
				if strings.HasSuffix(c.sort, "desc") {
					slices.Reverse(named)
				}
				if !slices.IsSortedFunc(named, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }) {
					t.Fatalf("rendered names %q are not in %s order", got, c.sort)
				}
			})
		}
		// A language without name fields in the index (fr-FR, falling
		// back to de-DE) and a type whose display name is another
		// attribute: sorted in memory along the same chains.
		addFrenchAndStories(t, s, article)
		for _, c := range []struct {
			typ, lang, sort string
			want            []string
		}{
			{"article", "fr-FR", "displayName", []string{"Alpha", "Beta", "Charlie", "Delta", "Echo", "Foxtrot", "Gamma", "Zulu DE"}},
			{"article", "fr-FR", "displayName desc", []string{"Zulu DE", "Gamma", "Foxtrot", "Echo", "Delta", "Charlie", "Beta", "Alpha"}},
			{"article", "de-DE", "displayName", []string{"Alpha", "Beta", "Charlie", "Delta", "Echo", "Gamma", "Zulu DE", "zzz"}},
			{"story", "de-DE", "displayName", []string{"Iota", "Kappa", "Lambda", "Theta"}},
			{"story", "de-DE", "displayName desc", []string{"Theta", "Lambda", "Kappa", "Iota"}},
			{"story", "en-US", "displayName", []string{"Aaa", "Kappa", "Lambda", "Theta"}},
		} {
			t.Run(c.typ+" "+c.lang+" "+c.sort, func(t *testing.T) {
				l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: c.typ, Lang: c.lang, Sort: c.sort, Props: delivery.PropsNone})
				if err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(l.Objs))
				for i, o := range l.Objs {
					got[i] = o.DisplayName
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("displayName order = %q, want %q", got, c.want)
				}
			})
		}
	})
}

// addArticles adds a type "article" with objects created so that id order
// is not name order: named in en-US only (Gamma, Alpha), de-DE only
// (Delta, Beta), language-independent only (Charlie), and in both
// (Zulu / Zulu DE, yankee / Echo: lower case, as the sort ignores case).
func addArticles(t *testing.T, s *deliverytest.Site) (article int64) {
	t.Helper()
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	_, ids, err := s.Content.CreateObjects(ctx, "4", editor, []content.ObjectInput{{TypeID: content.RootID,
		APIIdentifier: facetPtr("article"), Values: []content.ValueInput{facetValue(1000, langEnUS, "Article")}}})
	if err != nil {
		t.Fatal(err)
	}
	article = ids[0]
	named := func(names map[int64]string) content.ObjectInput {
		in := content.ObjectInput{TypeID: article}
		for l, n := range names {
			in.Values = append(in.Values, facetValue(1000, l, n))
		}
		return in
	}
	_, ids, err = s.Content.CreateObjects(ctx, "4", editor, []content.ObjectInput{
		named(map[int64]string{langEnUS: "Gamma"}),
		named(map[int64]string{langDeDE: "Delta"}),
		named(map[int64]string{langEnUS: "Zulu", langDeDE: "Zulu DE"}),
		named(map[int64]string{langEnUS: "Alpha"}),
		{TypeID: article}, // gets a language-independent name below
		named(map[int64]string{langDeDE: "Beta"}),
		named(map[int64]string{langEnUS: "yankee", langDeDE: "Echo"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	// pkg/content refuses language 0 for the language-dependent attribute
	// 1000, but a store migrated from NovaDB can hold such a name: write
	// it directly, with the change event pkg/content would append.
	tx, err := s.Store.Begin(ctx, store.TxMeta{User: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.PutValues(ctx, store.Value{Branch: 4, ObjectID: ids[4], AttributeID: 1000, JSON: json.RawMessage(`"Charlie"`)}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(changes.Event{Branch: 4, Transaction: tx.ID(), ObjectIDs: []int64{ids[4]}, Kind: "updated"})
	if err := tx.AppendOutbox(ctx, store.OutboxEvent{Subject: "cms.changes.4", MsgID: fmt.Sprintf("tx-%d", tx.ID()), Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Publish(t)
	return article
}

// addFrenchAndStories adds the language fr-FR (falling back to de-DE, not
// an indexed display-name language), an article named in fr-FR (Foxtrot)
// and en-US (zzz), and a type "story" whose display-name attribute (5005)
// is "title": titled Kappa (en-US), Iota (de-DE; attribute 1000 "Aaa" in
// en-US), untitled named Lambda, and Theta (en-US).
func addFrenchAndStories(t *testing.T, s *deliverytest.Site, article int64) {
	t.Helper()
	editor := content.Change{Caller: &auth.Principal{Name: "editor"}}
	create := func(in ...content.ObjectInput) []int64 {
		t.Helper()
		_, ids, err := s.Content.CreateObjects(ctx, "4", editor, in)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	ids := create(
		content.ObjectInput{TypeID: content.TypeLanguage, APIIdentifier: facetPtr("languageFrench"), Values: []content.ValueInput{
			facetValue(1000, langEnUS, "French"), facetValue(content.AttrIsoLanguageCode, 0, "fr-FR"),
			facetValue(content.AttrFallbackLanguage, 0, langDeDE)}},
		content.ObjectInput{TypeID: content.TypeAttribute, APIIdentifier: facetPtr("title"), Values: []content.ValueInput{
			facetValue(1000, langEnUS, "title"), facetValue(1001, 0, "String"), facetValue(1004, 0, false),
			facetValue(content.AttrLanguageDependent, 0, true)}})
	fr, title := ids[0], ids[1]
	create(content.ObjectInput{TypeID: article, Values: []content.ValueInput{facetValue(1000, fr, "Foxtrot"), facetValue(1000, langEnUS, "zzz")}})
	ids = create(content.ObjectInput{TypeID: content.RootID, APIIdentifier: facetPtr("story"), Values: []content.ValueInput{
		facetValue(1000, langEnUS, "Story"), facetValue(5005, 0, title)}})
	story := ids[0]
	create(
		content.ObjectInput{TypeID: story, Values: []content.ValueInput{facetValue(title, langEnUS, "Kappa")}},
		content.ObjectInput{TypeID: story, Values: []content.ValueInput{facetValue(title, langDeDE, "Iota"), facetValue(1000, langEnUS, "Aaa")}},
		content.ObjectInput{TypeID: story, Values: []content.ValueInput{facetValue(1000, langEnUS, "Lambda")}},
		content.ObjectInput{TypeID: story, Values: []content.ValueInput{facetValue(title, langEnUS, "Theta")}},
	)
	s.Publish(t)
}
