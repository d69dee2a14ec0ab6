package content

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/store"
)

// A webhook definition is an object of type 210; its secret is stored as
// written (the dispatcher signs with it) but no read returns it, and only
// administrators write it.
func TestWebHookDefinitionSecret(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		for _, api := range []string{"webHookUrl", "webHookSecret", "webHookBranches", "webHookTypes", "webHookKinds", "webHookEnabled"} {
			o := chk(s.GetObject(ctxBG, "4", api, ReadOptions{}))(t)
			if o.TypeID != TypeAttribute {
				t.Fatalf("%s = %+v", api, o)
			}
		}
		def := ObjectInput{TypeID: TypeWebHookDefinition, Values: []ValueInput{
			vin(AttrName, LanguageEnUS, "hook"), vin(AttrWebHookURL, 0, "https://example.org/hook"),
			vin(AttrWebHookSecret, 0, "s3cr3t-key"), vin(AttrWebHookEnabled, 0, true),
			vin(AttrWebHookKinds, 0, "created"),
		}}
		_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{def})
		wantErr(t, err, ErrForbidden, "editor sets a webhook secret")
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{def}))
		raw, err := st.ListValues(ctxBG, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrWebHookSecret}})
		if err != nil || len(raw) != 1 || string(raw[0].JSON) != `"s3cr3t-key"` {
			t.Fatalf("stored secret %v, %v", raw, err)
		}
		for _, o := range []ReadOptions{{Inherited: true}, {Attributes: []string{"webHookSecret"}}} {
			obj := chk(s.GetObject(ctxBG, "4", fmt.Sprint(ids[0]), o))(t)
			for _, v := range obj.Values {
				if v.Attribute == AttrWebHookSecret || strings.Contains(string(v.JSON), "s3cr3t") {
					t.Fatalf("read %+v returned the secret: %+v", o, v)
				}
			}
			if len(o.Attributes) == 0 && len(obj.Values) < 3 {
				t.Fatalf("read %+v lost the other values: %+v", o, obj.Values)
			}
		}
	})
}

// A webhook definition sends every matching change to a URL of its writer's
// choosing: only administrators create, change or delete one, even without
// a secret (a branch writer could create one).
func TestWebHookDefinitionsNeedAdmin(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		def := ObjectInput{TypeID: TypeWebHookDefinition, Values: []ValueInput{
			vin(AttrName, LanguageEnUS, "hook"), vin(AttrWebHookURL, 0, "https://example.org/hook"),
			vin(AttrWebHookEnabled, 0, true),
		}}
		_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{def})
		wantErr(t, err, ErrForbidden, "editor creates a webhook definition")
		if err == nil || !strings.Contains(err.Error(), "webhook definitions") {
			t.Errorf("the refusal does not say why: %v", err)
		}
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{def}))
		change := ObjectInput{ID: ids[0], Values: []ValueInput{vin(AttrWebHookURL, 0, "https://attacker.example/steal")}}
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{change})
		wantErr(t, err, ErrForbidden, "editor redirects a webhook")
		_, _, err = s.DeleteObjects(ctxBG, "4", editor, []string{fmt.Sprint(ids[0])})
		wantErr(t, err, ErrForbidden, "editor deletes a webhook")
		if _, err := s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{change}); err != nil {
			t.Fatalf("admin changes a webhook: %v", err)
		}
		if _, _, err := s.DeleteObjects(ctxBG, "4", adminCh, []string{fmt.Sprint(ids[0])}); err != nil {
			t.Fatalf("admin deletes a webhook: %v", err)
		}
	})
}
