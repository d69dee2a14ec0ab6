package content

import (
	"errors"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestGetObjectsSkipMissing: with SkipMissing, GetObjects returns the
// objects the identifiers name, in their order, leaving out unknown ids,
// GUIDs and ApiIdentifiers and user objects hidden from the caller; the
// virtual root (id 0) is still found. Without it the same read is
// ErrNotFound.
func TestGetObjectsSkipMissing(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		a := chk(s.EnsureUser(ctxBG, UserSpec{Name: "someone", Password: "a-long-password"}))(t)
		if !a {
			t.Fatal("EnsureUser wrote nothing")
		}
		users := chk(s.GetTypedObjects(ctxBG, "4", id(TypeUser), ListQuery{Take: 10}))(t)
		if len(users.Objects) != 1 {
			t.Fatalf("users: %+v", users.Objects)
		}
		user := users.Objects[0].ID
		idents := []string{id(TypeLanguage), "999999", "noSuchIdentifier", "0", "00000000-0000-0000-0000-00000000abcd", id(user), id(LanguageEnUS)}
		reader := &auth.Principal{Name: "reader", UserID: 424242}
		if _, err := s.GetObjects(ctxBG, "4", idents, ReadOptions{Caller: reader}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("without SkipMissing: %v, want ErrNotFound", err)
		}
		got := func(p *auth.Principal) []int64 {
			t.Helper()
			objs := chk(s.GetObjects(ctxBG, "4", idents, ReadOptions{Caller: p, SkipMissing: true}))(t)
			out := make([]int64, len(objs))
			for i, o := range objs {
				out[i] = o.ID
			}
			return out
		}
		if ids := got(reader); !slices.Equal(ids, []int64{TypeLanguage, RootID, LanguageEnUS}) {
			t.Errorf("a reader: %v, want the language type, the root and en-US", ids)
		}
		if ids := got(&auth.Principal{Name: "admin", Admin: true}); !slices.Equal(ids, []int64{TypeLanguage, RootID, user, LanguageEnUS}) {
			t.Errorf("an administrator: %v, want the user too", ids)
		}
		if objs := chk(s.GetObjects(ctxBG, "4", []string{"999999"}, ReadOptions{SkipMissing: true}))(t); len(objs) != 0 {
			t.Errorf("only missing: %+v", objs)
		}
	})
}
