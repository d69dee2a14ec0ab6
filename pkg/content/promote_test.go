package content

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

// releaser may write the default branch and so every branch below it.
var releaser = Change{Caller: &auth.Principal{Name: "releaser", Write: []int64{BranchDefault}}, Comment: "release"}

// diffKeys renders a diff as "object kind [!] attr:child/base/parent; …".
func diffKeys(ds []ObjectDiff) []string {
	side := func(vs []Value) string {
		parts := make([]string, len(vs))
		for j, v := range vs {
			parts[j] = string(v.JSON)
		}
		return strings.Join(parts, ",")
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		s := fmt.Sprintf("%d %s", d.Object, d.Kind)
		if d.Conflict {
			s += " !"
		}
		for _, c := range d.Changes {
			s += fmt.Sprintf(" %d:%s/%s/%s", c.Attribute, side(c.Child), side(c.Base), side(c.Parent))
			if c.Conflict {
				s += "!"
			}
		}
		out[i] = s
	}
	return out
}

// TestBranchDiffAndPromote: the diff lists what a child created, deleted
// and overrode with the parent's base and current values, a change on
// both sides is a conflict that refuses the promote by default; a promote
// moves everything to the parent in one transaction, the child then holds
// nothing of its own, and promoting again writes nothing.
func TestBranchDiffAndPromote(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 2)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 3)}},
		}))
		a, b, c := ids[0], ids[1], ids[2]
		child := id(newBranch(t, s, "Release", BranchDefault))
		_, made := must2(t)(s.CreateObjects(ctxBG, child, editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 9)}}}))
		n := made[0]
		chk(s.UpdateObjects(ctxBG, child, editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 10)}},
			{ID: b, Values: []ValueInput{vin(sc.rank, 0, 20)}}}))(t)
		if _, _, err := s.DeleteObjects(ctxBG, child, editor, []string{id(c)}); err != nil {
			t.Fatal(err)
		}
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: b, Values: []ValueInput{vin(sc.rank, 0, 21)}}}))(t)

		page := chk(s.BranchDiff(ctxBG, child, DiffQuery{}))(t)
		want := []string{
			fmt.Sprintf("%d updated %d:10/1/1", a, sc.rank),
			fmt.Sprintf("%d updated ! %d:20/2/21!", b, sc.rank),
			fmt.Sprintf("%d deleted", c),
			fmt.Sprintf("%d created %d:9//", n, sc.rank),
		}
		if got := diffKeys(page.Objects); fmt.Sprint(got) != fmt.Sprint(want) || page.Parent != BranchDefault {
			t.Fatalf("diff:\n got %q\nwant %q", got, want)
		}
		first := chk(s.BranchDiff(ctxBG, child, DiffQuery{Take: 3}))(t)
		rest := chk(s.BranchDiff(ctxBG, child, DiffQuery{Take: 3, Continue: first.Continue}))(t)
		if len(first.Objects) != 3 || len(rest.Objects) != 1 || rest.Continue != "" || rest.Objects[0].Object != n {
			t.Fatalf("pages: %q then %q (%q)", diffKeys(first.Objects), diffKeys(rest.Objects), rest.Continue)
		}
		if _, err := s.BranchDiff(ctxBG, "4", DiffQuery{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("diff of the default branch: %v", err)
		}

		if _, err := s.PromoteBranch(ctxBG, child, editor, PromoteInput{}); !errors.Is(err, ErrForbidden) {
			t.Fatalf("promote without a write grant on the parent: %v", err)
		}
		_, err := s.PromoteBranch(ctxBG, child, releaser, PromoteInput{})
		if !errors.Is(err, ErrPromoteConflicts) {
			t.Fatalf("promote with a conflict, refuse: %v", err)
		}
		dry := chk(s.PromoteBranch(ctxBG, child, releaser, PromoteInput{DryRun: true}))(t)
		if dry.Transaction != nil || dry.Objects != 4 || dry.ConflictCount != 1 || dry.Created != 1 || dry.Deleted != 1 {
			t.Fatalf("dry run: %+v", dry)
		}
		res := chk(s.PromoteBranch(ctxBG, child, releaser, PromoteInput{Conflicts: ConflictsChildWins}))(t)
		if res.Transaction == nil || res.Objects != 4 || res.Transaction.Branch != BranchDefault {
			t.Fatalf("promote: %+v", res)
		}
		rank := func(branch string, obj int64) string {
			o, err := s.GetObject(ctxBG, branch, id(obj), ReadOptions{Inherited: true})
			if err != nil {
				return err.Error()
			}
			return fmt.Sprint(o.Deleted, valuesOf(o))
		}
		for _, br := range []string{"4", child} {
			for obj, want := range map[int64]string{a: "10", b: "20", n: "9"} {
				if got := rank(br, obj); got != fmt.Sprintf("false [%d/0/0/0=%s]", sc.rank, want) {
					t.Errorf("branch %s object %d after the promote: %s, want rank %s", br, obj, got, want)
				}
			}
			if got := rank(br, c); !strings.HasPrefix(got, "true") {
				t.Errorf("branch %s object %d after the promote: %s, want deleted", br, c, got)
			}
		}
		if page := chk(s.BranchDiff(ctxBG, child, DiffQuery{}))(t); len(page.Objects) != 0 {
			t.Fatalf("the child after the promote still holds %q", diffKeys(page.Objects))
		}
		again := chk(s.PromoteBranch(ctxBG, child, releaser, PromoteInput{}))(t)
		if again.Transaction != nil || again.Objects != 0 {
			t.Fatalf("the same promote again: %+v", again)
		}
	})
}

// TestPromoteParentWinsAndSelection: parent-wins keeps the parent's value
// and drops the child's; a selection promotes only the objects named.
func TestPromoteParentWinsAndSelection(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 2)}},
		}))
		a, b := ids[0], ids[1]
		child := id(newBranch(t, s, "Release", BranchDefault))
		chk(s.UpdateObjects(ctxBG, child, editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 10)}},
			{ID: b, Values: []ValueInput{vin(sc.rank, 0, 20)}}}))(t)
		chk(s.UpdateObjects(ctxBG, "4", editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 11)}}}))(t)

		res := chk(s.PromoteBranch(ctxBG, child, releaser, PromoteInput{Objects: []string{id(a)}, Conflicts: ConflictsParentWins}))(t)
		if res.Objects != 1 || res.ConflictCount != 1 {
			t.Fatalf("promote a, parent wins: %+v", res)
		}
		want := map[int64]string{a: "11", b: "20"}
		for obj, w := range want {
			o := chk(s.GetObject(ctxBG, child, id(obj), ReadOptions{Inherited: true}))(t)
			if got := fmt.Sprint(valuesOf(o)); got != fmt.Sprintf("[%d/0/0/0=%s]", sc.rank, w) {
				t.Errorf("object %d on the child: %s, want %s", obj, got, w)
			}
		}
		if page := chk(s.BranchDiff(ctxBG, child, DiffQuery{}))(t); fmt.Sprint(diffKeys(page.Objects)) != fmt.Sprint([]string{fmt.Sprintf("%d updated %d:20/2/2", b, sc.rank)}) {
			t.Fatalf("left on the child: %q", diffKeys(page.Objects))
		}
	})
}

// TestRevertPromote: a promote is reverted as one transaction: the
// objects it updated get their values of before, the ones it created are
// deleted, deletions are undone.
func TestRevertPromote(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		sc := newSchema(t, s)
		_, ids := must2(t)(s.CreateObjects(ctxBG, "4", editor, []ObjectInput{
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 1)}},
			{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 2)}},
		}))
		a, b := ids[0], ids[1]
		child := id(newBranch(t, s, "Release", BranchDefault))
		onChild, made := must2(t)(s.CreateObjects(ctxBG, child, editor, []ObjectInput{{TypeID: sc.article, Values: []ValueInput{vin(sc.rank, 0, 9)}}}))
		chk(s.UpdateObjects(ctxBG, child, editor, []ObjectInput{{ID: a, Values: []ValueInput{vin(sc.rank, 0, 10)}}}))(t)
		if _, _, err := s.DeleteObjects(ctxBG, child, editor, []string{id(b)}); err != nil {
			t.Fatal(err)
		}
		p := chk(s.PromoteBranch(ctxBG, child, releaser, PromoteInput{}))(t)
		res := chk(s.RevertTransaction(ctxBG, "4", releaser, p.Transaction.ID))(t)
		if res.RevertedObjects != 3 || res.Transaction.Comment != fmt.Sprintf("release [reverted transaction %d]", p.Transaction.ID) {
			t.Fatalf("revert of the promote: %+v", res)
		}
		for obj, want := range map[int64]string{a: fmt.Sprintf("false [%d/0/0/0=1]", sc.rank), b: fmt.Sprintf("false [%d/0/0/0=2]", sc.rank),
			made[0]: fmt.Sprintf("true [%d/0/0/0=9]", sc.rank)} {
			o := chk(s.GetObject(ctxBG, "4", id(obj), ReadOptions{}))(t)
			if got := fmt.Sprint(o.Deleted, valuesOf(o)); got != want {
				t.Errorf("object %d after the revert: %s, want %s", obj, got, want)
			}
		}
		// The bootstrap (transaction 1) created the system objects: they
		// are never deleted.
		if _, err := s.RevertTransaction(ctxBG, "4", Change{Caller: &auth.Principal{Name: "root", Admin: true}}, 1); !errors.Is(err, ErrInvalid) {
			t.Fatalf("revert of the bootstrap: %v", err)
		}
		if _, err := s.GetObject(ctxBG, "4", id(TypeBranch), ReadOptions{}); err != nil {
			t.Fatalf("after the refused revert of the bootstrap: %v", err)
		}
		if _, err := s.RevertTransaction(ctxBG, "4", releaser, onChild.ID); !errors.Is(err, ErrInvalid) {
			t.Fatalf("revert on a branch the transaction did not write: %v", err)
		}
	})
}
