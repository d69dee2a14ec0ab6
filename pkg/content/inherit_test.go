package content

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// "Back to inherited": a value row with Inherit removes the child's own
// rows of its (attribute, language, variant), a null marker included, so
// the parent's value shows there again; a plain null keeps hiding it.
func TestUpdateInheritRemovesTheLocalValue(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		child := newBranch(t, s, "Spring", BranchDefault)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article,
			Values: []ValueInput{vin(sc.title, LanguageEnUS, "Parent"), vin(sc.rank, 0, 1)}}}))
		page := ids[0]
		shown := func() string {
			o := chk(s.GetObject(ctxBG, id(child), id(page), ReadOptions{Inherited: true}))(t)
			return fmt.Sprint(valuesOf(o))
		}
		update := func(vals ...ValueInput) error {
			_, err := s.UpdateObjects(ctxBG, id(child), editor, []ObjectInput{{ID: page, Values: vals}})
			return err
		}
		// Override the title, hide the rank.
		if err := update(vin(sc.title, LanguageEnUS, "Child"), ValueInput{Attribute: sc.rank, JSON: js(nil)}); err != nil {
			t.Fatal(err)
		}
		if got := shown(); got != fmt.Sprintf(`[%d/201/0/0="Child"]`, sc.title) {
			t.Fatalf("after the override = %s", got)
		}
		// Back to inherited, both.
		if err := update(ValueInput{Attribute: sc.title, Language: LanguageEnUS, JSON: js(nil), Inherit: true},
			ValueInput{Attribute: sc.rank, JSON: js(nil), Inherit: true}); err != nil {
			t.Fatal(err)
		}
		if got := shown(); got != fmt.Sprintf(`[%d/201/0/0="Parent" %d/0/0/0=1]`, sc.title, sc.rank) {
			t.Fatalf("back to inherited = %s", got)
		}
		if local := chk(s.GetObject(ctxBG, id(child), id(page), ReadOptions{}))(t); len(local.Values) != 0 {
			t.Fatalf("local values after back to inherited = %v", valuesOf(local))
		}
		// Inherit with a value, or mixed with values of the group, is 400.
		if err := update(ValueInput{Attribute: sc.rank, JSON: js(2), Inherit: true}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("inherit with a value = %v, want ErrInvalid", err)
		}
		// On the default branch (nothing to inherit) it removes the value.
		if _, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: page,
			Values: []ValueInput{{Attribute: sc.rank, JSON: js(nil), Inherit: true}}}}); err != nil {
			t.Fatal(err)
		}
		if got := shown(); got != fmt.Sprintf(`[%d/201/0/0="Parent"]`, sc.title) {
			t.Fatalf("after removing on the parent = %s", got)
		}
	})
}

// An invalid value names its field: attribute, language and variant (the
// ProblemDetails members the studio shows the error at).
func TestInvalidValueIsAValueError(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}}}))
		_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(sc.title, LanguageDeDE, 5)}}})
		var ve *ValueError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || ve.Attribute != sc.title || ve.Language == nil || *ve.Language != LanguageDeDE ||
			ve.Variant == nil || *ve.Variant != 0 {
			t.Fatalf("a string attribute given a number: %v (%+v)", err, ve)
		}
	})
}

// An invalid value of a multi-valued attribute also names its row: the
// sortReverse it was sent with, else its place in the request, both for a
// value of the wrong kind and for a reference to an object that does not
// exist (checked after all values).
func TestInvalidValueNamesItsRow(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}, {TypeID: sc.article}}))
		row := func(v any) ValueInput { return ValueInput{Attribute: sc.related, JSON: js(v)} }
		at := func(v any, sort int64) ValueInput { r := row(v); r.SortReverse = &sort; return r }
		for _, c := range []struct {
			what string
			vals []ValueInput
			want int64
		}{
			{"not an id, by place", []ValueInput{row(ids[1]), row(ids[1]), row("x")}, 2},
			{"not an id, by sortReverse", []ValueInput{at("x", 4), at(ids[1], 0)}, 4},
			{"a missing object", []ValueInput{row(ids[1]), row(99999999)}, 1},
		} {
			_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: c.vals}})
			var ve *ValueError
			if !errors.As(err, &ve) || ve.Attribute != sc.related || ve.SortReverse == nil || *ve.SortReverse != c.want ||
				ve.Language == nil || *ve.Language != 0 || ve.Variant == nil || *ve.Variant != 0 {
				t.Errorf("%s: %v (%+v), want row %d", c.what, err, ve, c.want)
			}
		}
	})
}
