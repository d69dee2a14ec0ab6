package content

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

func TestBootstrap(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		last := chk(st.LastTransactionID(ctxBG))(t)
		if last != 1 {
			t.Fatalf("bootstrap used %d transactions, want 1", last)
		}
		if err := Bootstrap(ctxBG, st); err != nil {
			t.Fatal(err)
		}
		if again := chk(st.LastTransactionID(ctxBG))(t); again != last {
			t.Fatalf("second Bootstrap wrote transaction %d", again)
		}
		for ident, want := range map[string]struct {
			id, typ int64
			api     string
		}{
			"branchDefault": {4, TypeBranch, "branchDefault"}, "40": {40, RootID, "typeBranch"},
			"typeAttribute": {10, RootID, "typeAttribute"}, "attributeName": {1000, TypeAttribute, "attributeName"},
			"201": {201, TypeLanguage, "languageEnglishUS"}, "languageGermanGermany": {202, TypeLanguage, "languageGermanGermany"},
			"branchParent": {4000, TypeAttribute, "branchParent"}, "root": {0, RootID, "root"}, "0": {0, RootID, "root"},
			"typeUser": {TypeUser, RootID, "typeUser"},
		} {
			o, err := s.GetObject(ctxBG, "4", ident, ReadOptions{Inherited: true})
			if err != nil {
				t.Fatalf("%s: %v", ident, err)
			}
			if o.ID != want.id || o.TypeID != want.typ || o.APIIdentifier != want.api {
				t.Fatalf("%s = %+v, want %+v", ident, o, want)
			}
		}
		de := chk(s.GetObject(ctxBG, "4", "202", ReadOptions{Inherited: true, Attributes: []string{"attributeIsoLanguageCode"}}))(t)
		if got := valuesOf(de); len(got) != 1 || got[0] != `2001/0/0/0="de-DE"` {
			t.Fatalf("de-DE values = %v", got)
		}
		ev := chk(st.ClaimOutbox(ctxBG, 10))(t)
		if len(ev) != 1 || ev[0].Subject != "cms.changes.4" || ev[0].MsgID != "tx-1" {
			t.Fatalf("bootstrap events = %+v", ev)
		}
		var ce changes.Event
		if err := json.Unmarshal(ev[0].Payload, &ce); err != nil || ce.Kind != "created" || len(ce.ObjectIDs) < 90 {
			t.Fatalf("bootstrap payload = %s (%v)", ev[0].Payload, err)
		}
	})
}

func TestIdentifierResolution(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		guid := "a1b2c3d4-0000-4000-8000-00000000000a"
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, GUID: "{A1B2C3D4-0000-4000-8000-00000000000A}", APIIdentifier: ptr("home")},
		}))
		for _, ident := range []string{id(ids[0]), guid, "A1B2C3D4000040008000-00000000000A"[:0] + "a1b2c3d4000040008000" + "00000000000a", "home"} {
			o, err := s.GetObject(ctxBG, "branchDefault", ident, ReadOptions{})
			if err != nil || o.ID != ids[0] || o.GUID != guid {
				t.Fatalf("GetObject(%q) = %+v, %v", ident, o, err)
			}
		}
		_, err := s.GetObject(ctxBG, "4", "nothing", ReadOptions{})
		wantErr(t, err, ErrNotFound, "unknown ApiIdentifier")
		_, err = s.GetObject(ctxBG, "4", "999999", ReadOptions{})
		wantErr(t, err, ErrNotFound, "unknown id")
		_, err = s.GetObject(ctxBG, "4", "not valid!", ReadOptions{})
		wantErr(t, err, ErrInvalid, "malformed identifier")
		// Ids are plain digits; no spaces or signs around any identifier.
		for _, ident := range []string{" home ", "+" + id(ids[0]), " " + id(ids[0]), id(ids[0]) + " ", "-4"} {
			_, err = s.GetObject(ctxBG, "4", ident, ReadOptions{})
			wantErr(t, err, ErrInvalid, "identifier "+strconv.Quote(ident))
		}
		_, err = s.GetObject(ctxBG, "+4", "home", ReadOptions{})
		wantErr(t, err, ErrInvalid, "branch +4")
		_, err = s.GetObject(ctxBG, " 4", "home", ReadOptions{})
		wantErr(t, err, ErrInvalid, "branch \" 4\"")
		_, err = s.GetObject(ctxBG, "nobranch", "home", ReadOptions{})
		wantErr(t, err, ErrNotFound, "unknown branch")
		_, err = s.GetObject(ctxBG, id(sc.article), "home", ReadOptions{})
		wantErr(t, err, ErrNotFound, "a non-branch object as branch")

		// A GUID-shaped ApiIdentifier of another object makes the GUID ambiguous.
		must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr(guid)}}))
		_, err = s.GetObject(ctxBG, "4", guid, ReadOptions{})
		wantErr(t, err, ErrAmbiguous, "GUID matching two objects")

		// ApiIdentifiers are unique and immutable.
		_, _, err = s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("home")}})
		wantErr(t, err, ErrInvalid, "duplicate ApiIdentifier")
		_, _, err = s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("9lives")}})
		wantErr(t, err, ErrInvalid, "ApiIdentifier starting with a digit")
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], APIIdentifier: ptr("other")}})
		wantErr(t, err, ErrForbidden, "changing an ApiIdentifier")
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], APIIdentifier: ptr("home")}}))(t)
		_, fresh := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}}))
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: fresh[0], APIIdentifier: ptr("later")}}))(t)
		if o := chk(s.GetObject(ctxBG, "4", "later", ReadOptions{}))(t); o.ID != fresh[0] {
			t.Fatalf("ApiIdentifier set later resolves to %d", o.ID)
		}
	})
}
