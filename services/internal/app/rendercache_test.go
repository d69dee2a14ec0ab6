package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

// runRenderCacheScenario: the render cache on a running server (both
// setups run it after runTemplatesScenario). A repeated render is a hit
// (the Prometheus counters tell); a change to an object the render read
// through a reference evicts it once this process applied the change
// event; a write shows in the very next render, before any event is
// applied (read your writes); a change to an object the render did not
// read keeps the entry; a template change evicts.
//
// "The invalidator caught up" is observed through a probe: another render
// over the same article that reads neither the author nor the main
// template, so no step evicts it. Its lookups are "behind" until this
// process applied the newest change event, then hits.
func runRenderCacheScenario(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	en := int(content.LanguageEnUS)
	attrs := admin.create(
		obj(content.TypeAttribute, "rcTitle", v(1001, 0, "String")),
		obj(content.TypeAttribute, "rcAuthor", v(1001, 0, "ObjRef")))
	types := admin.create(obj(0, "rcArticle", v(1000, en, "RC article")), obj(0, "rcPerson", v(1000, en, "RC person")))
	people := admin.create(obj(types.CreatedObjectIDs[1], "", v(1000, en, "Ann")), obj(types.CreatedObjectIDs[1], "", v(1000, en, "Bob")))
	ann, bob := people.CreatedObjectIDs[0], people.CreatedObjectIDs[1]
	art := admin.create(obj(types.CreatedObjectIDs[0], "", v(attrs.CreatedObjectIDs[0], 0, "Hi"), v(attrs.CreatedObjectIDs[1], 0, ann)))
	tpls := admin.create(
		obj(content.TypeRazorView, "rcCard", v(1000, en, "card"), v(content.AttrTemplateSource, 0, `{{value .Object "rcTitle"}} by {{name (ref .Object "rcAuthor")}}`)),
		obj(content.TypeRazorView, "rcProbe", v(1000, en, "probe"), v(content.AttrTemplateSource, 0, `{{value .Object "rcTitle"}}`)))
	path := func(tpl int64) string {
		return fmt.Sprintf("/apis/rendering/v1/branches/4/templates/%d/render?objects=%d", tpl, art.CreatedObjectIDs[0])
	}
	card, probe := path(tpls.CreatedObjectIDs[0]), path(tpls.CreatedObjectIDs[1])
	counter := func(result string) float64 {
		return scrape(t, base)[`cms_render_cache_requests_total{result="`+result+`"}`]
	}
	render := func(p, want string) {
		t.Helper()
		if r := admin.must(http.StatusOK, http.MethodGet, p, ""); string(r.body) != want {
			t.Fatalf("%s: %q, want %q", p, r.body, want)
		}
	}
	// hit renders p until it is a cache hit (the process applied every
	// change event so far), each answer being want.
	hit := func(p, want string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			before := counter("hit")
			render(p, want)
			if counter("hit") > before {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no cache hit within 15 s (%v)", p, scrape(t, base))
			}
		}
	}
	patch := func(id, typ int64, values string) {
		t.Helper()
		admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
			fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, id, typ, values))
	}

	hit(card, "Hi by Ann")
	hit(probe, "Hi")
	hits := counter("hit")
	render(card, "Hi by Ann")
	if counter("hit") != hits+1 {
		t.Fatalf("a repeated render was no hit: %v", scrape(t, base))
	}

	// The referenced author changes; once the process applied the event
	// (the probe hits again), the card is gone from the cache: a miss
	// that shows the change.
	patch(ann, types.CreatedObjectIDs[1], v(1000, en, "Annie"))
	hit(probe, "Hi")
	misses := counter("miss")
	render(card, "Hi by Annie")
	if counter("miss") != misses+1 {
		t.Errorf("the author's change did not evict the card: %v", scrape(t, base))
	}
	hit(card, "Hi by Annie")

	// Read your writes: the very next render shows a write, whatever the
	// invalidator did so far; every later one too, until hits resume.
	patch(ann, types.CreatedObjectIDs[1], v(1000, en, "Anja"))
	render(card, "Hi by Anja")
	hit(card, "Hi by Anja")

	// An object the card did not read changes: no eviction (no miss).
	patch(bob, types.CreatedObjectIDs[1], v(1000, en, "Robert"))
	hit(probe, "Hi")
	misses = counter("miss")
	hits = counter("hit")
	render(card, "Hi by Anja")
	if counter("miss") != misses || counter("hit") != hits+1 {
		t.Errorf("an unrelated change evicted the card: %v", scrape(t, base))
	}

	// The template changes: evicted.
	patch(tpls.CreatedObjectIDs[0], content.TypeRazorView, v(content.AttrTemplateSource, 0, `{{name (ref .Object "rcAuthor")}}!`))
	hit(probe, "Hi")
	misses = counter("miss")
	render(card, "Anja!")
	if counter("miss") != misses+1 {
		t.Errorf("the template change did not evict the card: %v", scrape(t, base))
	}
	if s := scrape(t, base); s["cms_render_invalidations_total"] < 4 || s["cms_render_cache_stored_total"] < 3 {
		t.Errorf("render cache counters: %v", s)
	}
}

// runSheetCacheScenario: the same cache in front of the stylesheets (both
// setups run it after runStylesheetsScenario). A repeated sheet is a hit;
// a new text alignment evicts app-styles.css once this process applied its
// event (observed through {objectId}.css as the probe, which it does not
// touch); a change to the stylesheet object shows in the very next request.
func runSheetCacheScenario(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	counter := func(result string) float64 {
		return scrape(t, base)[`cms_render_cache_requests_total{result="`+result+`"}`]
	}
	get := func(p, want string) {
		t.Helper()
		if r := admin.must(http.StatusOK, http.MethodGet, p, ""); !strings.Contains(string(r.body), want) {
			t.Fatalf("%s lacks %q:\n%s", p, want, r.body)
		}
	}
	hit := func(p, want string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			before := counter("hit")
			get(p, want)
			if counter("hit") > before {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no cache hit within 15 s (%v)", p, scrape(t, base))
			}
		}
	}
	sheet := admin.create(obj(content.TypeCascadingStyleSheet, "", v(content.AttrStyleSheetSource, 0, ".rc { color: red; }")))
	sheetPath := fmt.Sprintf("/apis/rendering/v1/branches/4/css/%d.css", sheet.CreatedObjectIDs[0])
	stylesPath := "/apis/rendering/v1/branches/4/css/app-styles.css"
	admin.create(obj(content.TypeTextAlignment, "rcLeft", v(content.AttrTextAlignmentValue, 0, "left")))
	hit(stylesPath, ".rcLeft { text-align: left; }")
	hit(sheetPath, "color: red")

	admin.create(obj(content.TypeTextAlignment, "rcRight", v(content.AttrTextAlignmentValue, 0, "right")))
	hit(sheetPath, "color: red")
	misses := counter("miss")
	get(stylesPath, ".rcRight { text-align: right; }")
	if counter("miss") != misses+1 {
		t.Errorf("a new text alignment did not evict app-styles.css: %v", scrape(t, base))
	}

	admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects", fmt.Sprintf(
		`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, sheet.CreatedObjectIDs[0], content.TypeCascadingStyleSheet,
		v(content.AttrStyleSheetSource, 0, ".rc { color: blue; }")))
	get(sheetPath, "color: blue")
	hit(sheetPath, "color: blue")
}
