package management_test

import (
	"fmt"
	"testing"
)

// authComments checks the comment permissions (comments.go) with the users
// of runAuth: editor reads branch a, writer writes a, nobody but admin
// reaches b. obj is visible on both branches.
func authComments(t *testing.T, admin, editor, writer authUser, a, b, obj int) {
	comment := func(u authUser, want, branch int) int {
		t.Helper()
		r := u.call(t, want, "POST", "/comments", fmt.Sprintf(`{"branchId":%d,"objectRef":%d,"body":"<div>by %s</div>"}`, branch, obj, u.name))
		if want != 200 {
			return 0
		}
		return int(r.json(t)["id"].(float64))
	}
	onB := comment(admin, 200, b)
	onDefault := comment(admin, 200, 4)
	byEditor := comment(editor, 200, a) // read suffices to comment
	byWriter := comment(writer, 200, a)
	comment(editor, 403, b)
	comment(editor, 403, 4)
	comment(editor, 403, 999999) // an unknown branch is refused like one without the grant

	// Reading needs read on the comment's branch.
	editor.call(t, 200, "GET", fmt.Sprintf("/comments/%d", byWriter), "")
	editor.call(t, 403, "GET", fmt.Sprintf("/comments/%d", onB), "")
	editor.call(t, 403, "GET", fmt.Sprintf("/comments/%d", onDefault), "")
	editor.call(t, 404, "GET", "/comments/999999", "")
	// A list holds the readable branches only: another branch's, or an
	// unknown one's, is empty alike.
	for _, other := range []int{b, 999999} {
		if l := editor.call(t, 200, "GET", fmt.Sprintf("/comments?branchRef=%d", other), "").json(t); l["count"] != float64(0) {
			t.Errorf("editor's comments on branch %d: %v, want none", other, l)
		}
	}
	editor.call(t, 200, "GET", fmt.Sprintf("/comments?branchRef=%d", a), "")
	// An unfiltered list keeps the readable branches, and pages fill up
	// past the hidden comments (take=1 with a hidden comment in between).
	branchesOf := func(u authUser, query string) (out []int) {
		t.Helper()
		for path := "/comments?take=1" + query; ; {
			page := u.call(t, 200, "GET", path, "").json(t)
			for _, c := range page["cmsComments"].([]any) {
				out = append(out, int(c.(map[string]any)["branchRef"].(float64)))
			}
			next, _ := page["continue"].(string)
			if next == "" {
				return out
			}
			path = "/comments?take=1&continue=" + next + query
		}
	}
	if got := branchesOf(editor, ""); fmt.Sprint(got) != fmt.Sprint([]int{a, a}) {
		t.Fatalf("editor's comment branches = %v, want [%d %d]", got, a, a)
	}
	if got := branchesOf(admin, fmt.Sprintf("&objectRef=%d", obj)); len(got) != 4 {
		t.Fatalf("admin sees comments on branches %v, want 4", got)
	}

	// Changing: own comments with read; others' never; admin always.
	patch := `{"body":"<div>edited</div>"}`
	editor.call(t, 200, "PATCH", fmt.Sprintf("/comments/%d", byEditor), patch)
	editor.call(t, 403, "PATCH", fmt.Sprintf("/comments/%d", byWriter), patch)
	editor.call(t, 403, "DELETE", fmt.Sprintf("/comments/%d", byWriter), "")
	editor.call(t, 403, "PATCH", fmt.Sprintf("/comments/%d", onB), patch)
	editor.call(t, 403, "DELETE", fmt.Sprintf("/comments/%d", onB), "")
	writer.call(t, 403, "PATCH", fmt.Sprintf("/comments/%d", byEditor), patch) // write on the branch is not authorship
	admin.call(t, 200, "PATCH", fmt.Sprintf("/comments/%d", byWriter), patch)
	editor.call(t, 200, "DELETE", fmt.Sprintf("/comments/%d", byEditor), "")
	admin.call(t, 200, "DELETE", fmt.Sprintf("/comments/%d", onB), "")
	if got := admin.call(t, 200, "GET", fmt.Sprintf("/comments/%d", byWriter), "").json(t)["body"]; got != "<div>edited</div>" {
		t.Fatalf("body after admin's edit = %v", got)
	}
}
