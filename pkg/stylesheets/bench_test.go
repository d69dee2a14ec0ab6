package stylesheets

import (
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// BenchmarkAppStyles builds app-styles.css over 100 paragraph styles, 10
// families and 4 alignments on an embedded store, and reports sheets/s
// against the baseline of only reading the same three object lists (what
// the build adds is validation, escaping and writing).
func BenchmarkAppStyles(b *testing.B) {
	ctx := context.Background()
	c := setups.Content(b)
	j := func(v any) json.RawMessage { r, _ := json.Marshal(v); return r }
	var in []content.ObjectInput
	for i := range 10 {
		in = append(in, content.ObjectInput{TypeID: content.TypeFontFamily, Values: []content.ValueInput{
			{Attribute: content.AttrFontFamilyName, JSON: j("Family " + string(rune('A'+i)))}}})
	}
	for _, a := range []string{"left", "right", "center", "justify"} {
		in = append(in, content.ObjectInput{TypeID: content.TypeTextAlignment, Values: []content.ValueInput{
			{Attribute: content.AttrTextAlignmentValue, JSON: j(a)}}})
	}
	ch := content.Change{Caller: &auth.Principal{Name: "bench", Admin: true}}
	_, ids, err := c.CreateObjects(ctx, "4", ch, in)
	if err != nil {
		b.Fatal(err)
	}
	in = nil
	for i := range 100 {
		in = append(in, content.ObjectInput{TypeID: content.TypeParagraphStyle, Values: []content.ValueInput{
			{Attribute: content.AttrParagraphStyleFontFamily, JSON: j(ids[i%10])},
			{Attribute: content.AttrParagraphStyleTextAlignment, JSON: j(ids[10+i%4])},
			{Attribute: content.AttrParagraphStyleFontSize, JSON: j(10 + i%8)},
			{Attribute: content.AttrParagraphStyleColor, JSON: j("#336699")}}})
	}
	if _, _, err := c.CreateObjects(ctx, "4", ch, in); err != nil {
		b.Fatal(err)
	}
	svc := New(c, nil)
	var build, read time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := svc.AppStyles(ctx, "4"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for _, typ := range []int64{content.TypeFontFamily, content.TypeTextAlignment, content.TypeParagraphStyle} {
			if _, err := svc.objects(ctx, "4", typ); err != nil {
				b.Fatal(err)
			}
		}
		build, read = build+t1.Sub(t0), read+time.Since(t1)
	}
	b.ReportMetric(float64(b.N)/build.Seconds(), "sheets/s")
	b.ReportMetric(float64(b.N)/read.Seconds(), "baseline-reads/s")
	b.ReportMetric(build.Seconds()/read.Seconds(), "ratio-time")
}
