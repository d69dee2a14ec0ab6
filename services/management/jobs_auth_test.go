package management_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/services/internal/app"
)

// TestJobPermissions: creating a job needs write on its branch (declared
// in the proto); a job addressed by id needs read on its branch to be
// read and write to be changed; an unfiltered list shows the jobs of
// readable branches only.
func TestJobPermissions(t *testing.T) { runJobPermissions(t, app.Component{}) }

// TestJobPermissionsPostgres runs them on PostgreSQL.
func TestJobPermissionsPostgres(t *testing.T) {
	runJobPermissions(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

func runJobPermissions(t *testing.T, store app.Component) {
	base, _ := authSystem(t, store, t.TempDir(), "admin-pw")
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

	// Jobs acting on the whole installation (1203 jobReindex, 1204
	// jobCleanupFiles, and a user definition of those kinds) need an
	// administrator, whatever the caller's grants on the job's branch.
	wide := admin.call(t, 201, "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":120,"apiIdentifier":"myCleanup"},"values":[`+
		`{"attribute":1000,"language":201,"variant":0,"value":"My clean-up"},{"attribute":1210,"language":0,"variant":0,"value":"jobCleanupFiles"}]}]}`).created(t)
	for _, def := range []int{1203, 1204, wide} {
		body := fmt.Sprintf(`{"branchId":%d,"jobDefinitionId":%d,"parameters":[{"name":"dryRun","values":["true"]}],"language":0}`, a, def)
		if r := writer.call(t, 403, "POST", "/jobs", body); !strings.Contains(r.body, "whole installation") {
			t.Errorf("writer starts definition %d: %s", def, r.body)
		}
	}
	cleanup := int(admin.call(t, 200, "POST", "/jobs", fmt.Sprintf(`{"branchId":%d,"jobDefinitionId":1204,"parameters":[{"name":"dryRun","values":["true"]}],"language":0}`, a)).json(t)["id"].(float64))
	writer.call(t, 403, "PATCH", fmt.Sprintf("/jobs/%d", cleanup), `{"state":5}`)
	writer.call(t, 403, "DELETE", fmt.Sprintf("/jobs/%d", cleanup), "")
	writer.call(t, 200, "GET", fmt.Sprintf("/jobs/%d", cleanup), "")
	admin.call(t, 200, "PATCH", fmt.Sprintf("/jobs/%d", cleanup), `{"retainUntil":"2030-01-01T00:00:00Z"}`)

	list := reader.call(t, 200, "GET", "/jobs", "").json(t)
	var ids []int
	for _, j := range list["cmsJobs"].([]any) {
		ids = append(ids, int(j.(map[string]any)["id"].(float64)))
	}
	if fmt.Sprint(ids) != fmt.Sprint([]int{cleanup, onA}) { // newest first, branch A's only
		t.Fatalf("reader's job list = %v, want %v", ids, []int{cleanup, onA})
	}
	for _, other := range []int{b, 999999} { // another branch's jobs, or an unknown one's: none alike
		if l := reader.call(t, 200, "GET", fmt.Sprintf("/jobs?branchId=%d", other), "").json(t); l["count"] != float64(0) {
			t.Errorf("reader's jobs on branch %d: %v, want none", other, l)
		}
	}
	if all := admin.call(t, 200, "GET", "/jobs", "").json(t); all["count"] != float64(3) {
		t.Fatalf("admin's job list = %v", all)
	}
}
