package templates

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// benchListTemplate is the list template BenchmarkRender renders.
const benchListTemplate = `<ul>{{range .Objects}}<li>{{name .}}: {{value . "headline"}} by {{name (ref . "author")}}, {{number (value . "price") 2}}</li>{{end}}</ul>`

// BenchmarkRender renders a list template over 100 articles (headline
// along the language fallback, the display name, the author's display
// name through a reference, the price formatted for the culture) on an
// embedded store, and reports renders/s against two baselines measured in
// the same run:
//   - exec: the same template text executed in process by html/template
//     over the same data already in memory (plain maps, functions of the
//     same names): the template machinery alone (ratio-exec);
//   - reads: only reading the same 100 objects and their authors (two
//     GetObjects calls): what the data costs (ratio-reads).
//
// It also renders the same request through a render cache that holds it
// (cached-renders/s; speedup-cached is uncached time over cached time): a
// hit costs the fence read (one store query) and a memory lookup.
func BenchmarkRender(b *testing.B) {
	st := setups.SQLiteStore(b)
	if err := content.Bootstrap(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	w := newWorldOn(b, content.New(st, nil))
	ctx := context.Background()
	var objs, authors []string
	type article struct {
		name, headline, author string
		price                  float64
	}
	data := make([]article, 0, 100)
	for i := range 100 {
		author, authorName := w.ann, "Ann"
		if i%2 == 1 {
			author, authorName = w.bob, "Bob"
		}
		id := create(b, w.c, w.article, "", val(w.headline, content.LanguageEnUS, "Headline "+strconv.Itoa(i)),
			val(w.price, 0, float64(i)*10.5), val(w.author, 0, author))
		objs = append(objs, strconv.FormatInt(id, 10))
		data = append(data, article{name: "Headline " + strconv.Itoa(i), headline: "Headline " + strconv.Itoa(i),
			author: authorName, price: float64(i) * 10.5})
	}
	authors = ids(w.ann, w.bob)
	list := w.template(b, "benchlist", benchListTemplate)
	s := New(w.c, Limits{}, nil)
	req := Request{Branch: "4", Template: list, Objects: objs, Languages: []string{"de-DE"}}
	if _, err := s.Render(ctx, req); err != nil {
		b.Fatal(err)
	}
	rc := rendercache.New(memory.New(memory.Options{}), st, rendercache.Options{})
	if err := rc.Invalidator(nil, "bench", st).Start(ctx); err != nil {
		b.Fatal(err)
	}
	sc := New(w.c, Limits{}, nil).WithCache(rc)
	if _, err := sc.Render(ctx, req); err != nil {
		b.Fatal(err)
	}
	// The in-process baseline: the same text, plain html/template, data
	// in memory.
	plain := template.Must(template.New("plain").Funcs(template.FuncMap{
		"name": func(a any) string {
			if s, ok := a.(string); ok {
				return s
			}
			return a.(*article).name
		},
		"value": func(a *article, attr string) any {
			if attr == "headline" {
				return a.headline
			}
			return a.price
		},
		"ref":    func(a *article, _ string) string { return a.author },
		"number": func(v any, digits int) string { return strconv.FormatFloat(v.(float64), 'f', digits, 64) },
	}).Parse(benchListTemplate))
	items := make([]*article, len(data))
	for i := range data {
		items[i] = &data[i]
	}
	plainData := map[string]any{"Objects": items}
	if err := plain.Execute(io.Discard, plainData); err != nil {
		b.Fatal(fmt.Errorf("plain template: %w", err))
	}
	opts := content.ReadOptions{Inherited: true}
	var render, exec, read, hit time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := plain.Execute(io.Discard, plainData); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := w.c.GetObjects(ctx, "4", objs, opts); err != nil {
			b.Fatal(err)
		}
		if _, err := w.c.GetObjects(ctx, "4", authors, opts); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := sc.Render(ctx, req); err != nil {
			b.Fatal(err)
		}
		render, exec, read, hit = render+t1.Sub(t0), exec+t2.Sub(t1), read+t3.Sub(t2), hit+time.Since(t3)
	}
	b.StopTimer()
	if got := rc.Stats().Hits; got != int64(b.N) {
		b.Fatalf("cached renders: %d hits of %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/render.Seconds(), "renders/s")
	b.ReportMetric(float64(b.N)/exec.Seconds(), "exec-baseline/s")
	b.ReportMetric(float64(b.N)/read.Seconds(), "reads-baseline/s")
	b.ReportMetric(render.Seconds()/exec.Seconds(), "ratio-exec")
	b.ReportMetric(render.Seconds()/read.Seconds(), "ratio-reads")
	b.ReportMetric(float64(b.N)/hit.Seconds(), "cached-renders/s")
	b.ReportMetric(render.Seconds()/hit.Seconds(), "speedup-cached")
}
