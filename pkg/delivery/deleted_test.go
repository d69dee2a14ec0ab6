package delivery_test

import (
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"reflect"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// TestDeletedObjects: soft-deleted objects are indexed with their flag.
// Every Delivery read leaves them out by default (lists, counts, get by
// id, resolved references, occurrences, suggestions, the meta-model) and
// deleted=true includes them, marked meta.deleted.
func TestDeletedObjects(t *testing.T) {
	deliverytest.OnEachEngine(t, func(t *testing.T, s *deliverytest.Site) {
		ed := content.Change{Caller: &auth.Principal{Name: "editor"}}
		_, del, err := s.Content.DeleteObjects(ctx, "4", ed, []string{strconv.FormatInt(s.About, 10), strconv.FormatInt(s.M1, 10)})
		if err != nil {
			t.Fatal(err)
		}
		s.Publish(t)
		// The deletion is the branch's newest change.
		if info, err := s.Svc.UpdateInfo(ctx, "4"); err != nil || info.LastTransaction != del.ID {
			t.Errorf("updateInfo = %+v, %v; want the deletion's transaction %d", info, err, del.ID)
		}
		pages := delivery.Request{Branch: "4", Type: "webPage", Sort: "meta.id"}
		withDeleted := pages
		withDeleted.Deleted = true

		list, err := s.Svc.List(ctx, pages)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(list.Objs), []int64{s.Home, s.DeOnly}; !reflect.DeepEqual(got, want) {
			t.Errorf("list = %v, want %v without the deleted About", got, want)
		}
		list, err = s.Svc.List(ctx, withDeleted)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(list.Objs), []int64{s.Home, s.About, s.DeOnly}; !reflect.DeepEqual(got, want) {
			t.Fatalf("list with deleted = %v, want %v", got, want)
		}
		for _, o := range list.Objs {
			if o.Meta.Deleted != (o.Meta.ID == s.About) {
				t.Errorf("object %d: meta.deleted = %v", o.Meta.ID, o.Meta.Deleted)
			}
		}
		onlyDeleted := withDeleted
		onlyDeleted.Filter = "meta.deleted=true"
		if list, err = s.Svc.List(ctx, onlyDeleted); err != nil || !reflect.DeepEqual(ids(list.Objs), []int64{s.About}) {
			t.Errorf("list of meta.deleted=true = %v, %v; want [About]", ids(list.Objs), err)
		}
		for _, c := range []struct {
			r    delivery.Request
			want int64
		}{{pages, 2}, {withDeleted, 3}, {onlyDeleted, 1}} {
			if n, err := s.Svc.Count(ctx, c.r); err != nil || n != c.want {
				t.Errorf("count deleted=%v filter %q = %d, %v; want %d", c.r.Deleted, c.r.Filter, n, err, c.want)
			}
		}

		// Get by id: not found, unless deleted ones are asked for.
		about := strconv.FormatInt(s.About, 10)
		if _, err := s.Svc.Get(ctx, delivery.Request{Branch: "4"}, about); !errors.Is(err, delivery.ErrNotFound) {
			t.Errorf("get deleted About = %v, want ErrNotFound", err)
		}
		got, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Deleted: true}, about)
		if err != nil || !got.Obj.Meta.Deleted || got.Obj.DisplayName != "About us" {
			t.Errorf("get deleted About with deleted=true = %+v, %v", got.Obj, err)
		}

		// References: the deleted module M1 is no resolved target.
		home, err := s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs", ResolveDepth: i32(1)}, "home")
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(home.Refs); !reflect.DeepEqual(got, []int64{s.M2}) {
			t.Errorf("resolved refs = %v, want only the live module %d", got, s.M2)
		}
		home, err = s.Svc.Get(ctx, delivery.Request{Branch: "4", Resolve: "moduleRefs", ResolveDepth: i32(1), Deleted: true}, "home")
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(home.Refs); !reflect.DeepEqual(got, []int64{s.M1, s.M2}) {
			t.Errorf("resolved refs with deleted = %v, want both modules", got)
		}

		// Occurrences and suggestions count live objects by default.
		occ, err := s.Svc.Occurrences(ctx, pages, "price", 10)
		if err != nil {
			t.Fatal(err)
		}
		if o := occ["price"]; o.NotNull != 1 || len(o.Values) != 1 {
			t.Errorf("price occurrences = %+v, want the live Home's only", o)
		}
		if occ, err = s.Svc.Occurrences(ctx, withDeleted, "price", 10); err != nil || occ["price"].NotNull != 2 {
			t.Errorf("price occurrences with deleted = %+v, %v; want 2", occ["price"], err)
		}
		sug, err := s.Svc.Suggestions(ctx, pages, delivery.SuggestOptions{Pattern: "ab", Fields: "attributeName", Take: 10})
		if err != nil || len(sug) != 0 {
			t.Errorf("suggestions for %q = %+v, %v; want none from the deleted About", "ab", sug, err)
		}
		if sug, err = s.Svc.Suggestions(ctx, withDeleted, delivery.SuggestOptions{Pattern: "ab", Fields: "attributeName", Take: 10}); err != nil || len(sug) != 1 {
			t.Errorf("suggestions with deleted = %+v, %v; want about", sug, err)
		}

		// The meta-model leaves deleted types and attributes out.
		if _, _, err := s.Content.DeleteObjects(ctx, "4", ed, []string{"image", strconv.FormatInt(s.Keywords, 10)}); err != nil {
			t.Fatal(err)
		}
		s.Publish(t)
		types, err := s.Svc.Types(ctx, "4")
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range types {
			if typ.Meta.ID == s.Image {
				t.Errorf("the deleted type image is listed: %+v", typ)
			}
		}
		if _, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: "image", Deleted: true}); !errors.Is(err, delivery.ErrNotFound) {
			t.Errorf("list of the deleted type image = %v, want ErrNotFound", err)
		}
		home, err = s.Svc.Get(ctx, delivery.Request{Branch: "4"}, "home")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := home.Obj.Props["seoKeywords"]; ok {
			t.Errorf("props of home show the deleted attribute seoKeywords: %v", home.Obj.Props)
		}
	})
}
