package templates

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

// BenchmarkRender renders a list template over 50 articles (headline
// along the language fallback, the display name, the author's display
// name through a reference, the price formatted for the culture) on an
// embedded store, and reports renders/s against the baseline of only
// reading the same 50 objects and their authors (two GetObjects calls):
// what rendering adds is the template, the language and attribute reads
// and the functions.
func BenchmarkRender(b *testing.B) {
	w := newWorld(b)
	ctx := context.Background()
	var objs, authors []string
	for i := range 50 {
		author := w.ann
		if i%2 == 1 {
			author = w.bob
		}
		id := create(b, w.c, w.article, "", val(w.headline, content.LanguageEnUS, "Headline "+strconv.Itoa(i)),
			val(w.price, 0, float64(i)*10.5), val(w.author, 0, author))
		objs = append(objs, strconv.FormatInt(id, 10))
	}
	authors = ids(w.ann, w.bob)
	list := w.template(b, "benchlist", `<ul>{{range .Objects}}<li>{{name .}}: {{value . "headline"}} by {{name (ref . "author")}}, {{number (value . "price") 2}}</li>{{end}}</ul>`)
	s := New(w.c, Limits{}, nil)
	req := Request{Branch: "4", Template: list, Objects: objs, Languages: []string{"de-DE"}}
	if _, err := s.Render(ctx, req); err != nil {
		b.Fatal(err)
	}
	opts := content.ReadOptions{Inherited: true}
	var render, read time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := w.c.GetObjects(ctx, "4", objs, opts); err != nil {
			b.Fatal(err)
		}
		if _, err := w.c.GetObjects(ctx, "4", authors, opts); err != nil {
			b.Fatal(err)
		}
		render, read = render+t1.Sub(t0), read+time.Since(t1)
	}
	b.ReportMetric(float64(b.N)/render.Seconds(), "renders/s")
	b.ReportMetric(float64(b.N)/read.Seconds(), "baseline-reads/s")
	b.ReportMetric(render.Seconds()/read.Seconds(), "ratio-time")
}
