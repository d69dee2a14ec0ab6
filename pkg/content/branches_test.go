package content

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

func newBranch(t *testing.T, s *Service, name string, parent int64) int64 {
	t.Helper()
	b, _, err := s.CreateBranch(ctxBG, editor, []ValueInput{vin(AttrName, LanguageEnUS, name), vin(AttrBranchParent, 0, parent)})
	if err != nil {
		t.Fatalf("CreateBranch %s: %v", name, err)
	}
	return b.ID
}

func TestBranchInheritance(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		child := newBranch(t, s, "Spring", BranchDefault)
		grandchild := newBranch(t, s, "Spring draft", child)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("page"),
			Values: []ValueInput{vin(sc.title, LanguageEnUS, "Parent"), vin(sc.title, LanguageDeDE, "Eltern"), vin(sc.rank, 0, 1)}}}))
		page := ids[0]
		all := ReadOptions{Inherited: true}

		o := chk(s.GetObject(ctxBG, id(child), "page", all))(t)
		if got := fmt.Sprint(valuesOf(o)); got != fmt.Sprintf(`[%d/201/0/0="Parent" %d/202/0/0="Eltern" %d/0/0/0=1]`, sc.title, sc.title, sc.rank) {
			t.Fatalf("inherited values on child = %s", got)
		}
		if local := chk(s.GetObject(ctxBG, id(child), "page", ReadOptions{}))(t); len(local.Values) != 0 {
			t.Fatalf("local values on child = %v", valuesOf(local))
		}

		// Override on the child: the parent keeps its value, the grandchild inherits the child's.
		res := chk(s.UpdateObjects(ctxBG, id(child), editor, []ObjectInput{{ID: page,
			Values: []ValueInput{vin(sc.title, LanguageEnUS, "Child"), {Attribute: sc.rank, JSON: js(nil)}}}}))(t)
		if res.UpdatedObjects != 1 || res.CreatedValues != 1 || res.Transaction.Branch != child {
			t.Fatalf("update result = %+v", res)
		}
		title := func(branch int64) string {
			o := chk(s.GetObject(ctxBG, id(branch), "page", ReadOptions{Inherited: true, Attributes: []string{"title"}, Languages: []string{"201"}}))(t)
			return fmt.Sprint(valuesOf(o))
		}
		if got := title(BranchDefault); got != fmt.Sprintf(`[%d/201/0/0="Parent"]`, sc.title) {
			t.Fatalf("parent after child override = %s", got)
		}
		if got := title(grandchild); got != fmt.Sprintf(`[%d/201/0/0="Child"]`, sc.title) {
			t.Fatalf("grandchild = %s", got)
		}
		o = chk(s.GetObject(ctxBG, id(grandchild), "page", all))(t)
		if slices.ContainsFunc(o.Values, func(v Value) bool { return v.Attribute == sc.rank }) {
			t.Fatalf("rank removed on the child is still visible on the grandchild: %v", valuesOf(o))
		}
		// lastTransaction counts local changes only: none on the grandchild.
		if o.LastTransaction != 0 || o.Version != res.Transaction.ID {
			t.Fatalf("grandchild: lastTransaction %d (want 0), version %d (want %d)", o.LastTransaction, o.Version, res.Transaction.ID)
		}
		childObj := chk(s.GetObject(ctxBG, id(child), "page", ReadOptions{}))(t)
		if childObj.LastTransaction != res.Transaction.ID {
			t.Fatalf("lastTransaction on child = %d, want %d", childObj.LastTransaction, res.Transaction.ID)
		}
		// A change on the parent moves the child's version, not its lastTransaction.
		up := chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: page, Values: []ValueInput{vin(sc.title, LanguageDeDE, "Eltern 2")}}}))(t)
		for _, b := range []int64{child, grandchild} {
			o := chk(s.GetObject(ctxBG, id(b), "page", ReadOptions{}))(t)
			want := res.Transaction.ID
			if b == grandchild {
				want = 0
			}
			if o.LastTransaction != want || o.Version != up.Transaction.ID {
				t.Fatalf("branch %d after a parent change: lastTransaction %d (want %d), version %d (want %d)",
					b, o.LastTransaction, want, o.Version, up.Transaction.ID)
			}
		}
		if p := chk(s.GetObject(ctxBG, "4", "page", ReadOptions{}))(t); p.LastTransaction != up.Transaction.ID {
			t.Fatalf("lastTransaction on the parent = %d, want %d", p.LastTransaction, up.Transaction.ID)
		}

		// Objects created on the child stay there.
		_, cids := must2(t)(s.CreateObjects(ctxBG, id(child), editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("childOnly")}}))
		_, err := s.GetObject(ctxBG, "4", id(cids[0]), ReadOptions{})
		wantErr(t, err, ErrNotFound, "child object on the parent")
		if cids[0] <= child {
			t.Fatalf("object id %d not above branch id %d", cids[0], child)
		}
		chk(s.GetObject(ctxBG, id(grandchild), "childOnly", ReadOptions{}))(t)

		// Deleting on the child hides the object there only.
		n, _, err := s.DeleteObjects(ctxBG, id(child), editor, []string{"page"})
		if err != nil || n != 1 {
			t.Fatalf("DeleteObjects = %d, %v", n, err)
		}
		if o := chk(s.GetObject(ctxBG, id(child), "page", ReadOptions{}))(t); !o.Deleted {
			t.Fatal("deleted object not marked deleted on the child")
		}
		if o := chk(s.GetObject(ctxBG, id(grandchild), "page", ReadOptions{}))(t); !o.Deleted {
			t.Fatal("deleted object not marked deleted on the grandchild")
		}
		if o := chk(s.GetObject(ctxBG, "4", "page", ReadOptions{}))(t); o.Deleted {
			t.Fatal("deletion on the child leaked to the parent")
		}
		if n, _, err := s.DeleteObjects(ctxBG, id(child), editor, []string{"page"}); err != nil || n != 0 {
			t.Fatalf("second delete = %d, %v", n, err)
		}
	})
}

func TestMultiValuedReplace(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article}, {TypeID: sc.article}, {TypeID: sc.article}}))
		a, b, c := ids[0], ids[1], ids[2]
		set := func(branch string, refs ...int64) {
			var vals []ValueInput
			for _, r := range refs {
				vals = append(vals, vin(sc.related, 0, r))
			}
			if len(vals) == 0 {
				vals = []ValueInput{vin(sc.related, 0, nil)}
			}
			chk(s.UpdateObjects(ctxBG, branch, editor, []ObjectInput{{ID: a, TypeID: sc.article, Values: vals}}))(t)
		}
		related := func(branch string) string {
			o := chk(s.GetObject(ctxBG, branch, id(a), ReadOptions{Inherited: true, Attributes: []string{"related"}}))(t)
			var out []string
			for _, v := range o.Values {
				out = append(out, fmt.Sprintf("%d:%s", v.SortReverse, v.JSON))
			}
			return fmt.Sprint(out)
		}
		set("4", b, c)
		if got := related("4"); got != fmt.Sprintf("[0:%d 1:%d]", b, c) {
			t.Fatalf("after set = %s", got)
		}
		set("4", c)
		if got := related("4"); got != fmt.Sprintf("[0:%d]", c) {
			t.Fatalf("the complete set replaces: %s", got)
		}
		child := newBranch(t, s, "c", BranchDefault)
		set(id(child))
		if got := related(id(child)); got != "[]" {
			t.Fatalf("emptied on child = %s", got)
		}
		if got := related("4"); got != fmt.Sprintf("[0:%d]", c) {
			t.Fatalf("parent after child emptied = %s", got)
		}
	})
}

func TestBranchLifecycle(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, st store.Store) {
		b, tr, err := s.CreateBranch(ctxBG, editor, []ValueInput{vin(AttrName, LanguageEnUS, "Spring")})
		if err != nil {
			t.Fatal(err)
		}
		if b.TypeID != TypeBranch || tr.Branch != BranchDefault || tr.User != "editor" {
			t.Fatalf("created branch %+v in %+v", b, tr)
		}
		if got := fmt.Sprint(valuesOf(b)); got != `[1000/201/0/0="Spring" 4000/0/0/0=4]` {
			t.Fatalf("branch values = %s (parent defaults to 4)", got)
		}
		child := newBranch(t, s, "Child", b.ID)
		page := chk(s.GetBranches(ctxBG, ListQuery{Take: 2}))(t)
		if len(page.Objects) != 2 || page.Continue == "" || page.Objects[0].ID != BranchDefault {
			t.Fatalf("first page of branches = %+v", page)
		}
		page = chk(s.GetBranches(ctxBG, ListQuery{Take: 2, Continue: page.Continue}))(t)
		if len(page.Objects) != 1 || page.Continue != "" || page.Objects[0].ID != child {
			t.Fatalf("second page of branches = %+v", page)
		}
		got := chk(s.GetBranch(ctxBG, id(b.ID), ReadOptions{Attributes: []string{"branchParent"}}))(t)
		if fmt.Sprint(valuesOf(got)) != `[4000/0/0/0=4]` {
			t.Fatalf("GetBranch projection = %v", valuesOf(got))
		}

		n, _ := chk2(s.UpdateBranch(ctxBG, id(b.ID), editor, []ValueInput{vin(AttrName, LanguageDeDE, "Frühling")}))(t)
		if n != 1 {
			t.Fatalf("UpdateBranch created %d values", n)
		}
		_, _, err = s.UpdateBranch(ctxBG, id(b.ID), editor, []ValueInput{vin(AttrBranchParent, 0, child)})
		wantErr(t, err, ErrInvalid, "re-parenting")
		_, _, err = s.CreateBranch(ctxBG, editor, []ValueInput{vin(AttrBranchParent, 0, 10)})
		wantErr(t, err, ErrInvalid, "parent that is not a branch")
		_, err = s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: b.ID, Values: []ValueInput{vin(AttrName, LanguageEnUS, "x")}}})
		wantErr(t, err, ErrInvalid, "branch through UpdateObjects")
		_, _, err = s.DeleteObjects(ctxBG, "4", editor, []string{id(b.ID)})
		wantErr(t, err, ErrInvalid, "branch through DeleteObjects")
		_, _, err = s.DeleteObjects(ctxBG, "4", editor, []string{"typeAttribute"})
		wantErr(t, err, ErrInvalid, "protected system type")

		_, err = s.DeleteBranch(ctxBG, "4", editor)
		wantErr(t, err, ErrInvalid, "default branch")
		_, err = s.DeleteBranch(ctxBG, id(b.ID), editor)
		wantErr(t, err, ErrInvalid, "branch with a child")
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, id(child), editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("inChild")}}))
		tr, err = s.DeleteBranch(ctxBG, id(child), editor)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.GetBranch(ctxBG, id(child), ReadOptions{})
		wantErr(t, err, ErrNotFound, "deleted branch")
		if rows := chk(st.GetObjectsIn(ctxBG, []int64{child}, ids))(t); len(rows) != 0 {
			t.Fatalf("objects of a deleted branch remain: %v", rows)
		}
		// The ApiIdentifier is free again.
		must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{{TypeID: sc.article, APIIdentifier: ptr("inChild")}}))

		ev := chk(st.ClaimOutbox(ctxBG, 100))(t)
		var last changes.Event
		for _, e := range ev {
			if e.TxID == tr.ID {
				_ = json.Unmarshal(e.Payload, &last)
				if e.Subject != changes.Subject(child) {
					t.Fatalf("branch deletion subject %s", e.Subject)
				}
			}
		}
		if last.Kind != "branchDeleted" || last.Branch != child {
			t.Fatalf("branch deletion event = %+v", last)
		}
	})
}

func chk2[A, B any](a A, b B, err error) func(t *testing.T) (A, B) {
	return func(t *testing.T) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}
