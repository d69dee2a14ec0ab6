package delivery_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestGetByIDIsTheScopedSearch: Get by object id reads the object's
// document directly; it finds exactly what a search of the scope finds
// (the list filtered by meta.id): never a user, a deleted object only
// when asked for, of the asked type only.
func TestGetByIDIsTheScopedSearch(t *testing.T) {
	deliverytest.OnEachEngine(t, func(t *testing.T, s *deliverytest.Site) {
		ed := content.Change{Caller: &auth.Principal{Name: "editor"}}
		name, _ := json.Marshal("Some User")
		admin := content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}}
		_, users, err := s.Content.CreateObjects(ctx, "4", admin, []content.ObjectInput{{TypeID: content.TypeUser,
			Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: name},
				{Attribute: content.AttrUserName, JSON: name}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Content.DeleteObjects(ctx, "4", ed, []string{strconv.FormatInt(s.About, 10)}); err != nil {
			t.Fatal(err)
		}
		s.Publish(t)
		all, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Deleted: true, Take: 500})
		if err != nil {
			t.Fatal(err)
		}
		if all.More {
			t.Fatal("the site has more objects than one page")
		}
		ids := append([]int64{users[0], 999999999}, users...)
		types := []string{"", "webPage", "module"}
		for _, o := range all.Objs {
			ids = append(ids, o.Meta.ID)
		}
		for _, id := range ids {
			for _, typ := range types {
				for _, deleted := range []bool{false, true} {
					r := delivery.Request{Branch: "4", Type: typ, Deleted: deleted}
					list := r
					list.Filter, list.Take = "meta.id="+strconv.FormatInt(id, 10), 2
					want, err := s.Svc.List(ctx, list)
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.Svc.Get(ctx, r, strconv.FormatInt(id, 10))
					switch {
					case len(want.Objs) == 0:
						if !errors.Is(err, delivery.ErrNotFound) {
							t.Errorf("get %d type %q deleted %v = %+v, %v; the search finds nothing", id, typ, deleted, got.Obj.Meta, err)
						}
					case err != nil || got.Obj.Meta.ID != id || got.Obj.Meta.ETag != want.Objs[0].Meta.ETag:
						t.Errorf("get %d type %q deleted %v = %+v, %v; the search finds %+v", id, typ, deleted, got.Obj.Meta, err, want.Objs[0].Meta)
					}
				}
			}
		}
		if got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, strconv.FormatInt(users[0], 10)); !errors.Is(err, delivery.ErrNotFound) {
			t.Errorf("a user is delivered: %+v, %v", got.Obj.Meta, err)
		}
	})
}
