package stylesheets

import (
	"context"
	"github.com/cmsplatform/cms/pkg/auth"
	"strconv"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/cache/memory"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/rendercache"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
)

// TestSheetCache: a repeated sheet is a hit; a new object of a listed type
// (handled change event) evicts app-styles.css, a change to the stylesheet
// object evicts its sheet, and an unrelated change keeps both; a write
// shows in the next request before its event is handled.
func TestSheetCache(t *testing.T) {
	ctx := context.Background()
	st := setups.SQLiteStore(t)
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	c := content.New(st, nil)
	rc := rendercache.New(memory.New(memory.Options{}), st, rendercache.Options{})
	iv := rc.Invalidator(nil, "test", st)
	if err := iv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deliver := func() {
		t.Helper()
		setups.DeliverOutbox(t, st, iv.Handle)
	}
	update := func(id, attr int64, v any) {
		t.Helper()
		if _, err := c.UpdateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "test", Admin: true}},
			[]content.ObjectInput{{ID: id, Values: []content.ValueInput{val(attr, v)}}}); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(c, nil).WithCache(rc)
	get := func(build func() (Sheet, error), want string, hits int64) {
		t.Helper()
		sh, err := build()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(sh.CSS), want) {
			t.Errorf("sheet lacks %q:\n%s", want, sh.CSS)
		}
		if got := rc.Stats().Hits; got != hits {
			t.Errorf("hits %d, want %d (%+v)", got, hits, rc.Stats())
		}
	}
	styles := func() (Sheet, error) { return svc.AppStyles(ctx, "4") }
	create(t, c, content.TypeTextAlignment, "", val(content.AttrTextAlignmentValue, "left"))
	sheetID := create(t, c, content.TypeCascadingStyleSheet, "", val(content.AttrStyleSheetSource, "a { color: red; }"))
	object := func() (Sheet, error) { return svc.Object(ctx, "4", sheetID) }
	other := create(t, c, content.TypeCascadingStyleSheet, "", val(content.AttrStyleSheetSource, "b {}"))
	deliver()

	get(styles, "text-align: left", 0)
	get(styles, "text-align: left", 1)
	get(object, "color: red", 1)
	get(object, "color: red", 2)

	// A new object of a listed type evicts app-styles.css.
	center := create(t, c, content.TypeTextAlignment, "", val(content.AttrTextAlignmentValue, "center"))
	deliver()
	get(styles, ".ta-"+strconv.FormatInt(center, 10)+" { text-align: center; }", 2)
	get(styles, "text-align: center", 3)
	get(object, "color: red", 4)

	// The stylesheet object changes: its sheet shows it at once, and
	// is stored again once the event is handled.
	update(sheetID, content.AttrStyleSheetSource, "a { color: blue; }")
	get(object, "color: blue", 4)
	deliver()
	get(object, "color: blue", 5)

	// An unrelated change keeps both.
	update(other, content.AttrStyleSheetSource, "b { color: green; }")
	deliver()
	get(styles, "text-align: center", 6)
	get(object, "color: blue", 7)
}
