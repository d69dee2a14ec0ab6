package stylesheets

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

func val(attr int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	return content.ValueInput{Attribute: attr, JSON: b}
}

var create = setups.CreateObject

// TestAppStylesRules: a family without a name, an alignment with an
// invalid value (and a style naming it), out-of-range numbers are left out
// with a comment naming them; the rest of the rule stays.
func TestAppStylesRules(t *testing.T) {
	c := setups.Content(t)
	ctx := context.Background()
	fam := create(t, c, content.TypeFontFamily, "", val(content.AttrFontFamilyName, "Inter"))
	create(t, c, content.TypeFontFamily, "", val(content.AttrFontFamilyGeneric, "serif")) // no name
	bad := create(t, c, content.TypeTextAlignment, "", val(content.AttrTextAlignmentValue, "diagonal; color: red"))
	create(t, c, content.TypeParagraphStyle, "body_text",
		val(content.AttrParagraphStyleFontFamily, fam), val(content.AttrParagraphStyleFontSize, 1e9),
		val(content.AttrParagraphStyleColor, "#abc"), val(content.AttrParagraphStyleFontWeight, 5000),
		val(content.AttrParagraphStyleTextAlignment, bad))
	svc := New(c, nil)
	sh, err := svc.AppStyles(ctx, "4")
	if err != nil {
		t.Fatal(err)
	}
	css := string(sh.CSS)
	famClass := ".ff-" + strconv.FormatInt(fam, 10)
	for _, want := range []string{
		famClass + ` { font-family: "Inter"; }`,
		"no valid fontFamilyName",
		"text alignment " + strconv.FormatInt(bad, 10) + ": no valid textAlignmentValue",
		`.body_text { font-family: "Inter"; color: #abc; }`,
		"invalid values left out: [paragraphStyleFontSize paragraphStyleTextAlignment paragraphStyleFontWeight]",
	} {
		if !strings.Contains(css, want) {
			t.Errorf("lacks %q:\n%s", want, css)
		}
	}
	again, _ := svc.AppStyles(ctx, "4")
	if again.ETag != sh.ETag || !strings.HasPrefix(sh.ETag, `"`) {
		t.Errorf("ETag not stable: %s %s", sh.ETag, again.ETag)
	}
}

func TestLimits(t *testing.T) {
	c := setups.Content(t)
	ctx := context.Background()
	for range 3 {
		create(t, c, content.TypeTextAlignment, "", val(content.AttrTextAlignmentValue, "left"))
	}
	sheetID := create(t, c, content.TypeCascadingStyleSheet, "", val(content.AttrStyleSheetSource, strings.Repeat("a{}", 100)))
	svc := New(c, nil)
	svc.maxObjects = 2
	if _, err := svc.AppStyles(ctx, "4"); !errors.Is(err, errkind.TooLarge) {
		t.Errorf("3 alignments over a limit of 2: %v", err)
	}
	svc.maxObjects, svc.maxBytes = MaxObjects, 100
	if _, err := svc.Object(ctx, "4", sheetID); !errors.Is(err, errkind.TooLarge) {
		t.Errorf("300-byte source over a limit of 100: %v", err)
	}
	if _, err := svc.AppStyles(ctx, "4"); !errors.Is(err, errkind.TooLarge) {
		t.Errorf("a built sheet over 100 bytes: %v", err)
	}
	svc.maxBytes = MaxOutputBytes
	if _, err := svc.Object(ctx, "4", 999999); !errors.Is(err, errkind.NotFound) {
		t.Errorf("unknown object: %v", err)
	}
}
