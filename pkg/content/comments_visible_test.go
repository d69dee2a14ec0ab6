package content

import (
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/store"
)

// TestCommentsVisible: CommentQuery.Caller hides comments of branches the
// caller may not read, and pages keep Take visible comments however many hidden ones
// lie between them; the token walks on from the last one returned.
func TestCommentsVisible(t *testing.T) {
	backends(t, func(t *testing.T, s *Service, _ store.Store) {
		f := newCommentFixture(t, s)
		var want []int64
		for i := range 7 {
			branch := BranchDefault
			if i%3 == 0 {
				branch = f.child
			}
			c, err := s.CreateComment(ctxBG, alice, branch, f.onDefault, "<div/>")
			if err != nil {
				t.Fatal(err)
			}
			if branch == f.child {
				want = append([]int64{c.ID}, want...) // id descending
			}
		}
		onChild := &auth.Principal{Name: "reader", Read: []int64{f.child}}
		var got []int64
		q := CommentQuery{Take: 1, Caller: onChild}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("paging does not end")
			}
			page := chk(s.GetComments(ctxBG, q))(t)
			for _, c := range page.Comments {
				got = append(got, c.ID)
			}
			if page.Continue == "" {
				break
			}
			q.Continue = page.Continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("visible comments %v, want %v", got, want)
		}
		none := chk(s.GetComments(ctxBG, CommentQuery{Caller: &auth.Principal{Name: "nobody"}}))(t)
		if len(none.Comments) != 0 || none.Continue != "" {
			t.Fatalf("nothing visible, got %+v", none)
		}
		// A filter on a branch the caller may not read, or on one that does
		// not exist, finds nothing, for administrators too: no 404 tells
		// which branches exist.
		def, unknown := int64(BranchDefault), int64(999999999)
		for _, q := range []CommentQuery{{Branch: &def, Caller: onChild}, {Branch: &unknown, Caller: onChild},
			{Branch: &unknown, Caller: &auth.Principal{Name: "admin", Admin: true}}} {
			page := chk(s.GetComments(ctxBG, q))(t)
			if len(page.Comments) != 0 {
				t.Fatalf("branch %d as %s: %d comments, want none", *q.Branch, q.Caller.Name, len(page.Comments))
			}
		}
	})
}
