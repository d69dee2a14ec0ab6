package content

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

var adminCh = Change{Caller: &auth.Principal{Name: "admin", Admin: true}, Comment: "test"}

// rawUser writes a user object straight to the store, bypassing the
// service's checks (as older data might look). hash "" = no password.
func rawUser(t *testing.T, st store.Store, name, hash string) int64 {
	t.Helper()
	tx, err := st.Begin(ctxBG, store.TxMeta{User: "test", Branch: BranchDefault})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	ids, err := tx.NewObjectIDs(ctxBG, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.PutObjects(ctxBG, store.Object{ID: ids[0], Branch: BranchDefault, TypeID: TypeUser, GUID: newGUID()}); err != nil {
		t.Fatal(err)
	}
	vals := []store.Value{{ObjectID: ids[0], Branch: BranchDefault, AttributeID: AttrUserName, JSON: jsonOf(name)}}
	if hash != "" {
		vals = append(vals, store.Value{ObjectID: ids[0], Branch: BranchDefault, AttributeID: AttrUserPassword, JSON: jsonOf(hash)})
	}
	if err := tx.PutValues(ctxBG, vals...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctxBG); err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

func branch(t *testing.T, s *Service, name string, parent int64) int64 {
	t.Helper()
	b, _, err := s.CreateBranch(ctxBG, adminCh, []ValueInput{vin(AttrName, LanguageEnUS, name), vin(AttrBranchParent, 0, parent)})
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

func userInput(name, password string, extra ...ValueInput) ObjectInput {
	vals := []ValueInput{vin(AttrUserName, 0, name), vin(AttrName, LanguageEnUS, name)}
	if password != "" {
		vals = append(vals, vin(AttrUserPassword, 0, password))
	}
	return ObjectInput{TypeID: TypeUser, Values: append(vals, extra...)}
}

func TestPasswordIsHashedAndNeverRead(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("alice", "correct horse")}))
		raw, err := st.ListValues(ctxBG, BranchDefault, ids, store.ValueFilter{AttributeIDs: []int64{AttrUserPassword}})
		if err != nil || len(raw) != 1 {
			t.Fatalf("stored password rows %v, %v", raw, err)
		}
		var hash string
		if err := json.Unmarshal(raw[0].JSON, &hash); err != nil || !strings.HasPrefix(hash, "$2") {
			t.Fatalf("stored %s, want a bcrypt hash", raw[0].JSON)
		}
		if bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse")) != nil {
			t.Fatal("the stored hash does not match the password")
		}
		id := fmt.Sprint(ids[0])
		for _, o := range []ReadOptions{{Inherited: true}, {Inherited: true, Attributes: []string{"1101"}}, {Attributes: []string{"userPassword"}}} {
			obj := chk(s.GetObject(ctxBG, "4", id, o))(t)
			for _, v := range obj.Values {
				if v.Attribute == AttrUserPassword || strings.Contains(string(v.JSON), "$2") {
					t.Fatalf("read %+v returned the password: %+v", o, v)
				}
			}
		}
		page := chk(s.GetTypedObjects(ctxBG, "4", "typeUser", ListQuery{ReadOptions: ReadOptions{Inherited: true}}))(t)
		if len(page.Objects) != 1 || len(page.Objects[0].Values) == 0 {
			t.Fatalf("typed list %+v", page.Objects)
		}
		for _, v := range page.Objects[0].Values {
			if v.Attribute == AttrUserPassword {
				t.Fatal("typed list returned the password")
			}
		}
		// A bad password value is refused without being quoted.
		_, err = s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserPassword, 0, strings.Repeat("s3cr3t", 13))}}})
		wantErr(t, err, ErrInvalid, "73-byte password")
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Fatalf("the error quotes the password: %v", err)
		}
		_, err = s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserPassword, 0, 4711)}}})
		wantErr(t, err, ErrInvalid, "numeric password")
		if strings.Contains(err.Error(), "4711") {
			t.Fatalf("the error quotes the password: %v", err)
		}
	})
}

func TestSecurityWritesNeedAdmin(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("alice", "pw")}))
		_, objs := makeModel(t, s)
		alice := ids[0]
		cases := []struct {
			name string
			run  func() error
		}{
			{"create a user", func() error {
				_, _, err := s.CreateObjects(ctxBG, "4", editor, []ObjectInput{userInput("mallory", "pw")})
				return err
			}},
			{"rename a user", func() error {
				_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrName, LanguageEnUS, "x")}}})
				return err
			}},
			{"set a password", func() error {
				_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserPassword, 0, "new")}}})
				return err
			}},
			{"delete a user", func() error {
				_, _, err := s.DeleteObjects(ctxBG, "4", editor, []string{fmt.Sprint(alice)})
				return err
			}},
			{"put a session record on another object", func() error {
				_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: objs[0], Values: []ValueInput{vin(AttrUserTokenSessions, 0, "x")}}})
				return err
			}},
			{"put the admin flag on another object", func() error {
				_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: objs[0], Values: []ValueInput{vin(AttrUserAdmin, 0, true)}}})
				return err
			}},
			{"change a security attribute definition", func() error {
				_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: AttrUserAdmin, Values: []ValueInput{vin(AttrName, LanguageEnUS, "x")}}})
				return err
			}},
		}
		for _, c := range cases {
			wantErr(t, c.run(), ErrForbidden, c.name)
		}
		// Users live on branch 4 only.
		b := fmt.Sprint(branch(t, s, "A", BranchDefault))
		_, _, err := s.CreateObjects(ctxBG, b, adminCh, []ObjectInput{userInput("bob", "pw")})
		wantErr(t, err, ErrInvalid, "a user on another branch")
		_, err = s.UpdateObjects(ctxBG, b, adminCh, []ObjectInput{{ID: alice, Values: []ValueInput{vin(AttrUserAdmin, 0, true)}}})
		wantErr(t, err, ErrInvalid, "changing a user on another branch")
	})
}

// makeModel creates a type and one object of it on branch 4.
func makeModel(t *testing.T, s *Service) (int64, []int64) {
	t.Helper()
	_, typ := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: RootID}}))
	_, objs := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: typ[0], Values: []ValueInput{vin(AttrName, LanguageEnUS, "thing")}}}))
	return typ[0], objs
}

func TestUsersNeedAName(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("alice", "pw")}))
		_, _, err := s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{{TypeID: TypeUser, Values: []ValueInput{vin(AttrName, LanguageEnUS, "nameless")}}})
		wantErr(t, err, ErrInvalid, "a user without a user name")
		_, err = s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserName, 0, nil)}}})
		wantErr(t, err, ErrInvalid, "removing the user name")
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserName, 0, "Alice")}}}))(t)
		if _, err := s.Authenticate(ctxBG, "ALICE", "pw"); err != nil {
			t.Fatalf("renamed user: %v", err)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		a := branch(t, s, "A", BranchDefault)
		b := branch(t, s, "B", BranchDefault)
		_, users, err := s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{
			userInput("Alice", "pw-alice", vin(AttrUserReadBranches, 0, a), vin(AttrUserWriteBranches, 0, b)),
			userInput("root", "pw-root", vin(AttrUserAdmin, 0, true), vin(AttrUserInternal, 0, true)),
			userInput("nopass", ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Authenticate(ctxBG, "alice", "pw-alice")
		if err != nil {
			t.Fatal(err)
		}
		want := auth.Principal{Name: "Alice", Read: []int64{a}, Write: []int64{b}, UserID: users[0], Credential: p.Credential}
		if fmt.Sprint(p) != fmt.Sprint(want) || len(p.Credential) != 64 {
			t.Fatalf("principal %+v, want %+v", p, want)
		}
		if p, err = s.Authenticate(ctxBG, "root", "pw-root"); err != nil || !p.Admin || !p.Internal {
			t.Fatalf("root: %+v %v", p, err)
		}
		hash, _ := bcrypt.GenerateFromPassword([]byte("pw-dup"), bcrypt.MinCost)
		rawUser(t, st, "dup", string(hash))
		rawUser(t, st, "DUP", string(hash))
		_, gone := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("gone", "pw-gone")}))
		chk2(s.DeleteObjects(ctxBG, "4", adminCh, []string{fmt.Sprint(gone[0])}))(t)
		for _, c := range [][2]string{{"alice", "wrong"}, {"carol", "pw-alice"}, {"nopass", ""}, {"dup", "pw-dup"}, {"gone", "pw-gone"}, {"", ""}} {
			if _, err := s.Authenticate(ctxBG, c[0], c[1]); !errors.Is(err, auth.ErrBadCredentials) {
				t.Errorf("Authenticate(%q, %q) = %v, want ErrBadCredentials", c[0], c[1], err)
			}
		}
	})
}

func TestUsersChangedHook(t *testing.T) {
	backends(t, func(t *testing.T, _ *Service, st store.Store) {
		var calls atomic.Int64
		s := New(st, nil, WithUsersChanged(func() { calls.Add(1) }))
		expect := func(n int64, what string) {
			t.Helper()
			if got := calls.Load(); got != n {
				t.Fatalf("after %s: hook called %d times, want %d", what, got, n)
			}
		}
		makeModel(t, s)
		expect(0, "ordinary writes")
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", adminCh, []ObjectInput{userInput("alice", "pw")}))
		expect(1, "creating a user")
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserPassword, 0, "pw2")}}}))(t)
		expect(2, "changing a password")
		_, err := s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: ids[0], Values: []ValueInput{vin(AttrUserAdmin, 0, true)}}})
		wantErr(t, err, ErrForbidden, "editor grants admin")
		expect(2, "a refused write")
		chk2(s.DeleteObjects(ctxBG, "4", adminCh, []string{fmt.Sprint(ids[0])}))(t)
		expect(3, "deleting a user")
	})
}

func TestEnsureUser(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		spec := UserSpec{Name: "admin", Password: "first", Admin: true, Internal: true}
		if wrote, err := s.EnsureUser(ctxBG, spec); err != nil || !wrote {
			t.Fatalf("first EnsureUser: %v %v", wrote, err)
		}
		// A second process start with the same configuration writes nothing.
		if wrote, err := New(st, nil).EnsureUser(ctxBG, spec); err != nil || wrote {
			t.Fatalf("second EnsureUser: wrote=%v err=%v", wrote, err)
		}
		p, err := s.Authenticate(ctxBG, "admin", "first")
		if err != nil || !p.Admin || !p.Internal {
			t.Fatalf("admin: %+v %v", p, err)
		}
		hits, _ := findUsers(ctxBG, st, "admin")
		if len(hits) != 1 {
			t.Fatalf("%d admin users", len(hits))
		}
		// Someone revokes admin and changes the password; a restart with a
		// new configured password restores the rights and sets it.
		chk(s.UpdateObjects(ctxBG, "4", adminCh, []ObjectInput{{ID: hits[0].id, Values: []ValueInput{
			vin(AttrUserAdmin, 0, false), vin(AttrUserPassword, 0, "changed"), vin(AttrUserReadBranches, 0, BranchDefault)}}}))(t)
		spec.Password = "second"
		if wrote, err := s.EnsureUser(ctxBG, spec); err != nil || !wrote {
			t.Fatalf("EnsureUser after changes: %v %v", wrote, err)
		}
		if _, err := s.Authenticate(ctxBG, "admin", "first"); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("old password: %v", err)
		}
		p, err = s.Authenticate(ctxBG, "admin", "second")
		if err != nil || !p.Admin || !slices.Equal(p.Read, []int64{BranchDefault}) {
			t.Fatalf("after refresh: %+v %v (other grants must stay)", p, err)
		}
		if hits, _ := findUsers(ctxBG, st, "admin"); len(hits) != 1 {
			t.Fatalf("%d admin users after refresh", len(hits))
		}
		_, err = s.EnsureUser(ctxBG, UserSpec{Name: "x", Password: ""})
		wantErr(t, err, ErrInvalid, "empty password")
	})
}

func TestBranchChain(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		a := branch(t, s, "A", BranchDefault)
		b := branch(t, s, "B", a)
		if c := chk(s.BranchChain(ctxBG, fmt.Sprint(b)))(t); !slices.Equal(c, []int64{b, a, BranchDefault}) {
			t.Fatalf("chain of B = %v", c)
		}
		_, err := s.BranchChain(ctxBG, "999999")
		wantErr(t, err, ErrNotFound, "unknown branch")
		m := chk(s.BranchChains(ctxBG, []int64{a, BranchDefault, 999999}))(t)
		if len(m) != 2 || !slices.Equal(m[a], []int64{a, BranchDefault}) || !slices.Equal(m[BranchDefault], []int64{BranchDefault}) {
			t.Fatalf("chains %v", m)
		}
	})
}
