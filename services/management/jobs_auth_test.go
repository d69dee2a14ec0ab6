package management_test

import (
	"fmt"
	"testing"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestJobPermissions: creating a job needs write on its branch (declared
// in the proto); a job addressed by id needs read on its branch to be
// read and write to be changed; an unfiltered list shows the jobs of
// readable branches only.
func TestJobPermissions(t *testing.T) {
	base, _ := authSystem(t, app.Component{}, t.TempDir(), "admin-pw")
	admin := authUser{base, "admin", "admin-pw"}
	branch := func(name string) int {
		r := admin.call(t, 200, "POST", "/branches", fmt.Sprintf(`{"values":[{"attribute":1000,"language":201,"variant":0,"value":%q}]}`, name))
		return int(r.json(t)["meta"].(map[string]any)["id"].(float64))
	}
	a, b := branch("A"), branch("B")
	admin.call(t, 201, "POST", "/branches/4/objects", userJSON("reader", "reader-pw", grant(1104, a, 0)))
	admin.call(t, 201, "POST", "/branches/4/objects", userJSON("writer", "writer-pw", grant(1105, a, 0)))
	reader, writer := authUser{base, "reader", "reader-pw"}, authUser{base, "writer", "writer-pw"}
	job := func(u authUser, want, branch int) int {
		r := u.call(t, want, "POST", "/jobs", fmt.Sprintf(`{"branchId":%d,"jobDefinitionId":1200,"objIds":[201],"language":0}`, branch))
		if want != 200 {
			return 0
		}
		return int(r.json(t)["id"].(float64))
	}
	onA := job(writer, 200, a)
	onB := job(admin, 200, b)
	job(reader, 403, a)
	job(writer, 403, b)

	reader.call(t, 200, "GET", fmt.Sprintf("/jobs/%d", onA), "")
	for _, p := range []string{"", "/logs", "/progress", "/metrics", "/objectIds", "/artifacts", "/artifacts.zip"} {
		reader.call(t, 403, "GET", fmt.Sprintf("/jobs/%d%s", onB, p), "")
	}
	reader.call(t, 403, "PATCH", fmt.Sprintf("/jobs/%d", onA), `{"retainUntil":"2030-01-01T00:00:00Z"}`)
	reader.call(t, 403, "DELETE", fmt.Sprintf("/jobs/%d", onA), "")
	writer.call(t, 200, "PATCH", fmt.Sprintf("/jobs/%d", onA), `{"retainUntil":"2030-01-01T00:00:00Z"}`)
	writer.call(t, 403, "DELETE", fmt.Sprintf("/jobs/%d", onB), "")

	list := reader.call(t, 200, "GET", "/jobs", "").json(t)
	jobs := list["cmsJobs"].([]any)
	if len(jobs) != 1 || int(jobs[0].(map[string]any)["id"].(float64)) != onA {
		t.Fatalf("reader's job list = %v", list)
	}
	reader.call(t, 403, "GET", fmt.Sprintf("/jobs?branchId=%d", b), "")
	if all := admin.call(t, 200, "GET", "/jobs", "").json(t); all["count"] != float64(2) {
		t.Fatalf("admin's job list = %v", all)
	}
}
