package content

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
)

// sqliteService is a fresh bootstrapped service on SQLite (the rules
// tested here live above the store).
func sqliteService(t *testing.T) *Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return boot(t, st)
}

// wantInvalid fails unless err is ErrInvalid with a message holding want.
func wantInvalid(t *testing.T, err error, want, what string) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want ErrInvalid with %q", what, err, want)
	}
}

// TestSystemObjectsAreReadOnly: no write changes the definitions of the
// system types and attributes (or the media types, or a language's ISO
// code), on the default branch or a child, by id or ApiIdentifier, even
// as an administrator; nothing is stored.
func TestSystemObjectsAreReadOnly(t *testing.T) {
	s := sqliteService(t)
	b, _ := must3[Object, Transaction](t)(s.CreateBranch(ctxBG, adminCh, []ValueInput{vin(AttrName, LanguageEnUS, "child")}))
	child := id(b.ID)
	const frozen = "is a protected system object: its values cannot change"
	cases := []struct {
		name, branch string
		in           ObjectInput
		want         string
	}{
		{"rename a system type", "4", ObjectInput{ID: TypeBranch, Values: []ValueInput{vin(AttrName, LanguageEnUS, "Zweig")}}, "object 40 " + frozen},
		{"name a system type in German", "4", ObjectInput{ID: TypeBranch, Values: []ValueInput{vin(AttrName, LanguageDeDE, "Zweig")}}, "object 40 " + frozen},
		{"a system type's forms", "4", ObjectInput{ID: TypeLanguage, Values: []ValueInput{vin(AttrTypeDisplayName, 0, AttrIsoLanguageCode)}}, "object 20 " + frozen},
		{"by ApiIdentifier", "4", ObjectInput{APIIdentifier: ptr("typeUnit"), Values: []ValueInput{vin(AttrName, LanguageEnUS, "x")}}, "object 30 " + frozen},
		{"on a child branch", child, ObjectInput{ID: TypeBranch, Values: []ValueInput{vin(AttrName, LanguageEnUS, "Zweig")}}, "object 40 " + frozen},
		{"a system attribute's data type", "4", ObjectInput{ID: AttrName, Values: []ValueInput{vin(AttrDataType, 0, "Integer")}}, "object 1000 " + frozen},
		{"a system attribute's multiplicity", "4", ObjectInput{ID: AttrReferencedTypes, Values: []ValueInput{vin(AttrAllowMultiple, 0, false)}}, "object 1015 " + frozen},
		{"a system attribute's target types", "4", ObjectInput{ID: AttrBranchParent, Values: []ValueInput{vin(AttrReferencedTypes, 0, TypeLanguage)}}, "object 4000 " + frozen},
		{"a system attribute's language dependence", child, ObjectInput{ID: AttrName, Values: []ValueInput{vin(AttrLanguageDependent, 0, false)}}, "object 1000 " + frozen},
		{"an ApiIdentifier for a system attribute", "4", ObjectInput{ID: AttrMaxValues, APIIdentifier: ptr("attributeMaxValues")}, "object 1014 is a protected system object: it cannot get an apiIdentifier"},
		{"a media type's name", "4", ObjectInput{ID: model.MediaTypes[1].ID, Values: []ValueInput{vin(AttrName, LanguageEnUS, "image/gif")}}, frozen},
		{"a language's ISO code", "4", ObjectInput{ID: LanguageEnUS, Values: []ValueInput{vin(AttrIsoLanguageCode, 0, "en-GB")}}, "object 201 is a protected system object: attribute 2001 cannot change (only 1000, 2002 may)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.UpdateObjects(ctxBG, c.branch, adminCh, []ObjectInput{c.in})
			wantInvalid(t, err, c.want, "UpdateObjects")
		})
	}
	// One protected object refuses the whole request.
	_, attrs := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{{TypeID: TypeAttribute, Values: []ValueInput{vin(AttrDataType, 0, "String")}}}))
	_, err := s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{
		{ID: attrs[0], Values: []ValueInput{vin(AttrName, LanguageEnUS, "mine")}},
		{ID: TypeBranch, Values: []ValueInput{vin(AttrName, LanguageEnUS, "Zweig")}}})
	wantInvalid(t, err, "object 40 "+frozen, "a batch with a system type")
	_, _, err = s.UpdateBranch(ctxBG, "4", adminCh, []ValueInput{vin(AttrIsoLanguageCode, 0, "xx")})
	wantInvalid(t, err, "object 4 is a protected system object: attribute 2001 cannot change (only 1000, 4001, 4002, 4003, 4004 may)", "UpdateBranch 4")

	// A create cannot reach a system object: ids are allocated, GUIDs and
	// ApiIdentifiers unique (a guard: this held before the protection).
	_, _, err = s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: TypeBranch, TypeID: RootID, GUID: systemGUID(TypeBranch)}})
	wantInvalid(t, err, "is already used by object 40", "a create with a system GUID")
	_, _, err = s.CreateObjects(ctxBG, child, adminCh, []ObjectInput{{TypeID: RootID, APIIdentifier: ptr("typeBranch")}})
	wantInvalid(t, err, "is already used by object 40", "a create with a system ApiIdentifier")

	for _, br := range []string{"4", child} {
		got, err := s.GetObjects(ctxBG, br, []string{id(TypeBranch), id(AttrName), id(AttrMaxValues), id(attrs[0])}, ReadOptions{Inherited: true})
		if err != nil {
			t.Fatal(err)
		}
		if v := valuesOf(got[0]); !slices.Equal(v, []string{`1000/201/0/0="typeBranch"`}) {
			t.Errorf("branch %s: type 40 has %v", br, v)
		}
		if v := valuesOf(got[1]); !slices.Contains(v, `1001/0/0/0="String"`) || !slices.Contains(v, `1017/0/0/0=true`) {
			t.Errorf("branch %s: attribute 1000 has %v", br, v)
		}
		if got[2].APIIdentifier != "" || len(valuesOf(got[3])) != 1 {
			t.Errorf("branch %s: refused writes were stored: %+v %+v", br, got[2], got[3])
		}
	}
}

// TestSystemObjectsConfigurable: what an installation may configure of
// the system objects: a language's names and fallback, the default
// branch's name.
func TestSystemObjectsConfigurable(t *testing.T) {
	s := sqliteService(t)
	if _, err := s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{
		{ID: LanguageDeDE, Values: []ValueInput{vin(AttrName, LanguageDeDE, "Deutsch"), {Attribute: AttrFallbackLanguage, JSON: js(nil)}}},
		{APIIdentifier: ptr("languageEnglishUS"), Values: []ValueInput{vin(AttrName, LanguageDeDE, "Englisch"), vin(AttrFallbackLanguage, 0, LanguageDeDE)}},
	}); err != nil {
		t.Fatalf("languages: %v", err)
	}
	if _, _, err := s.UpdateBranch(ctxBG, "4", adminCh, []ValueInput{vin(AttrName, LanguageEnUS, "Main"), vin(AttrName, LanguageDeDE, "Haupt")}); err != nil {
		t.Fatalf("branch 4: %v", err)
	}
	got, err := s.GetObjects(ctxBG, "4", []string{id(LanguageDeDE), id(LanguageEnUS), id(BranchDefault)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := valuesOf(got[0]); slices.ContainsFunc(v, func(s string) bool { return strings.HasPrefix(s, "2002/") }) || !slices.Contains(v, `1000/202/0/0="Deutsch"`) {
		t.Errorf("de-DE: %v", v)
	}
	if v := valuesOf(got[1]); !slices.Contains(v, `2002/0/0/0=202`) || !slices.Contains(v, `2001/0/0/0="en-US"`) {
		t.Errorf("en-US: %v", v)
	}
	if v := valuesOf(got[2]); !slices.Contains(v, `1000/201/0/0="Main"`) || !slices.Contains(v, `1000/202/0/0="Haupt"`) {
		t.Errorf("branch 4: %v", v)
	}
}

func must3[A, B any](t *testing.T) func(A, B, error) (A, B) {
	return func(a A, b B, err error) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

// TestAttributeDefinitionValues: 1014 is 0 or more and agrees with 1004
// once a write is applied (on create and on update, against the stored
// values); 1013 is one of its three values.
func TestAttributeDefinitionValues(t *testing.T) {
	s := sqliteService(t)
	def := func(vals ...ValueInput) ObjectInput {
		return ObjectInput{TypeID: TypeAttribute, Values: append([]ValueInput{vin(AttrDataType, 0, "String")}, vals...)}
	}
	refused := []struct {
		name string
		in   ObjectInput
		want string
	}{
		{"negative maximum", def(vin(AttrAllowMultiple, 0, true), vin(AttrMaxValues, 0, -1)), "attribute 1014 (maximum number of values): -1 is not 0 (unlimited) or more"},
		{"a maximum on a single value", def(vin(AttrMaxValues, 0, 5)), "attribute 1014: object"},
		{"a maximum of 1 on multiple values", def(vin(AttrAllowMultiple, 0, true), vin(AttrMaxValues, 0, 1)), "a maximum of 1 is a single value"},
		{"an unknown inheritance behavior", def(vin(1013, 0, "Sometimes")), "attribute 1013 (String.InheritanceBehavior): value \"Sometimes\" is not one of"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{c.in})
			wantInvalid(t, err, c.want, "CreateObjects")
		})
	}
	_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{
		def(vin(AttrAllowMultiple, 0, true), vin(AttrMaxValues, 0, 5), vin(1013, 0, "Inheriting")),
		def(vin(AttrMaxValues, 0, 0)),
		def(vin(AttrMaxValues, 0, 1)),
	}))
	multi := ids[0]
	upd := func(vals ...ValueInput) error {
		_, err := s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: multi, Values: vals}})
		return err
	}
	wantInvalid(t, upd(vin(AttrMaxValues, 0, -3)), "attribute 1014 (maximum number of values): -3", "a negative maximum")
	wantInvalid(t, upd(vin(AttrAllowMultiple, 0, false)), "a maximum of 5 values needs 1004 true", "single-valued with a stored maximum")
	wantInvalid(t, upd(ValueInput{Attribute: AttrAllowMultiple, JSON: js(nil)}), "a maximum of 5 values needs 1004 true", "1004 removed with a stored maximum")
	wantInvalid(t, upd(vin(AttrMaxValues, 0, 1)), "a maximum of 1 is a single value", "a maximum of 1 on a multi-valued attribute")
	wantInvalid(t, upd(vin(1013, 0, "none")), "attribute 1013", "a misspelt inheritance behavior")
	if err := upd(vin(AttrMaxValues, 0, 7)); err != nil {
		t.Fatalf("a new maximum: %v", err)
	}
	if err := upd(vin(AttrAllowMultiple, 0, false), ValueInput{Attribute: AttrMaxValues, JSON: js(nil)}); err != nil {
		t.Fatalf("single-valued without a maximum: %v", err)
	}
	if err := upd(vin(1013, 0, "InheritingAll")); err != nil {
		t.Fatalf("an inheritance behavior: %v", err)
	}
}
