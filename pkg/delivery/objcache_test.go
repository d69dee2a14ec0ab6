package delivery_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestObjectCacheMatchesRendering: what Delivery answers from the objects
// it rendered before (objectCache) is exactly what rendering them afresh
// answers, for every object of the site in every view (languages, props
// modes, units, resolved references, deleted objects), read twice; and a
// change of an object or of the model is seen at once.
func TestObjectCacheMatchesRendering(t *testing.T) {
	s := deliverytest.NewSite(t)
	fresh, err := delivery.New(delivery.Options{Search: s.Engine, Layout: s.Options.Layout})
	if err != nil {
		t.Fatal(err)
	}
	fresh = delivery.WithoutObjectCache(fresh)
	all, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Deleted: true, Take: 500})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []delivery.Request
	for _, lang := range []string{"", "de-DE", "en-US"} {
		for props := int32(0); props <= 2; props++ {
			for _, units := range []bool{false, true} {
				reqs = append(reqs, delivery.Request{Branch: "4", Lang: lang, Props: props, ResolveUnits: units,
					Resolve: "moduleRefs,imageRef", Deleted: props == 1})
			}
		}
	}
	same := func(what string) {
		t.Helper()
		for _, r := range reqs {
			for _, o := range all.Objs {
				id := strconv.FormatInt(o.Meta.ID, 10)
				want, werr := fresh.Get(ctx, r, id)
				for range 2 {
					got, err := s.Svc.Get(ctx, r, id)
					if (err == nil) != (werr == nil) || !reflect.DeepEqual(got.Obj, want.Obj) || !reflect.DeepEqual(got.Refs, want.Refs) {
						t.Fatalf("%s: get %s %+v = %+v %+v, %v; rendered afresh %+v %+v, %v", what, id, r, got.Obj, got.Refs, err, want.Obj, want.Refs, werr)
					}
				}
			}
			got, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Lang: r.Lang, Props: r.Props, Resolve: r.Resolve, Take: 500})
			want, werr := fresh.List(ctx, delivery.Request{Branch: "4", Lang: r.Lang, Props: r.Props, Resolve: r.Resolve, Take: 500})
			if err != nil || werr != nil || !reflect.DeepEqual(got.Objs, want.Objs) || !reflect.DeepEqual(got.Refs, want.Refs) {
				t.Fatalf("%s: list %+v differs from the fresh rendering (%v, %v)", what, r, err, werr)
			}
		}
	}
	same("as published")

	// An object's change: its new rendering, not the kept one.
	update := func(in content.ObjectInput) {
		t.Helper()
		if _, err := s.Content.UpdateObjects(ctx, "4", content.Change{Caller: &auth.Principal{Name: "editor"}}, []content.ObjectInput{in}); err != nil {
			t.Fatal(err)
		}
		s.Publish(t)
	}
	name, _ := json.Marshal("Home, renamed")
	update(content.ObjectInput{ID: s.Home, Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: name}}})
	home, err := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, "home")
	if err != nil || home.Obj.DisplayName != "Home, renamed" {
		t.Fatalf("after the rename: %q, %v", home.Obj.DisplayName, err)
	}
	same("after an object's change")

	// A change of the model alone (the page form no longer lists the
	// navigation title): the unchanged page is rendered by the new model.
	var form []content.ValueInput
	for _, a := range []int64{s.ModuleRefs, s.HTML, s.Keywords, s.Price, s.Published} {
		id, _ := json.Marshal(a)
		form = append(form, content.ValueInput{Attribute: 5053, JSON: id})
	}
	update(content.ObjectInput{ID: s.PageForm, Values: form})
	home, err = s.Svc.Get(ctx, delivery.Request{Branch: "4"}, "home")
	if _, ok := home.Obj.Props["navigationTitle"]; err != nil || ok {
		t.Fatalf("after the form's change the page still shows its navigation title: %v, %v", home.Obj.Props, err)
	}
	same("after a change of the model")
}
