package hyphenate

import (
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// benchDoc is about 24 KiB of German article HTML.
var benchDoc = strings.Repeat(`<h2 class="titel">Rechtschreibung</h2><p>Die Silbentrennung der deutschen `+
	`Sprache folgt seit der Rechtschreibreform festen Regeln; zusammengesetzte Wörter wie Donaudampfschifffahrt `+
	`werden an ihren Bestandteilen getrennt. Siehe <a href="https://example.com/trennung">Trennregeln</a> und `+
	`<code>hyphenate.HTML</code> für Einzelheiten.</p>`, 64)

// tokenCopy is the baseline: the same tokenizer walk writing every token
// unchanged, i.e. the HTML handling without any hyphenation.
func tokenCopy(w io.Writer, src string) {
	z := html.NewTokenizer(strings.NewReader(src))
	for z.Next() != html.ErrorToken {
		_, _ = w.Write(z.Raw())
	}
}

// BenchmarkHTML hyphenates a German article and reports MB/s against the
// tokenizer-only copy of the same document measured in the same run.
func BenchmarkHTML(b *testing.B) {
	ForLanguage("de") // load the patterns outside the timing
	b.SetBytes(int64(len(benchDoc)))
	var hy, base time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := HTML(io.Discard, benchDoc, "de"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		tokenCopy(io.Discard, benchDoc)
		hy, base = hy+t1.Sub(t0), base+time.Since(t1)
	}
	mb := float64(len(benchDoc)) * float64(b.N) / 1e6
	b.ReportMetric(mb/hy.Seconds(), "hyphenated-MB/s")
	b.ReportMetric(mb/base.Seconds(), "baseline-tokenize-MB/s")
	b.ReportMetric(hy.Seconds()/base.Seconds(), "ratio-time")
}

// BenchmarkLoadGerman is the one-time cost of parsing the German patterns.
func BenchmarkLoadGerman(b *testing.B) {
	data, err := patternFiles.ReadFile("patterns/" + german.file)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		ParsePatterns(data, 2, 2)
	}
}
