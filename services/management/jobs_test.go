package management_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

// The job operations run against the whole system (`cms run`: the
// runner is in the process) over HTTP; every exchange is validated
// against NovaDB's document like the comment tests. The queue, the
// runner's crash recovery and both component setups are tested in
// pkg/jobs.

func TestJobsSQLite(t *testing.T) { runJobs(t, app.Component{}) }

func TestJobsPostgres(t *testing.T) {
	runJobs(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

// waitJob polls GET /jobs/{id} until the job is finished (state 2 or 3).
func (c docClient) waitJob(t *testing.T, id int64) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d", id), "").object(t)
		if s := j["state"].(float64); s == 2 || s == 3 {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not finish: %v", id, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runJobs(t *testing.T, store app.Component) {
	base, _ := startSystem(t, store)
	c := docClient{base: base, doc: contractDoc(t)}

	// Export two languages (system objects 201, 202) as JSON.
	r := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1200,"objIds":[201,202],"language":201}`).object(t)
	id := int64(r["id"].(float64))
	if id <= 0 || r["state"] != float64(0) || r["definitionRef"] != float64(1200) || r["user"] != "admin" || r["objectCount"] != float64(2) {
		t.Fatalf("created job = %v", r)
	}
	j := c.waitJob(t, id)
	if j["state"] != float64(2) || j["started"] == nil || j["finished"] == nil || j["artifacts"] != true || j["instanceId"] == nil {
		t.Fatalf("finished job = %v", j)
	}
	list := c.do(t, 200, "GET", "/jobs?state=2&branchId=4&definitionRef=1200&createdBy=ADMIN&take=1", "").object(t)
	if jobs := list["cmsJobs"].([]any); list["count"] != float64(1) || int64(jobs[0].(map[string]any)["id"].(float64)) != id {
		t.Fatalf("job list = %v", list)
	}
	arts := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/artifacts", id), "").object(t)["files"].([]any)
	if len(arts) != 1 || arts[0].(map[string]any)["path"] != "objects.json" ||
		arts[0].(map[string]any)["src"] != fmt.Sprintf("/apis/cms/v1/jobs/%d/artifacts/objects.json", id) {
		t.Fatalf("artifacts = %v", arts)
	}
	whole := c.bin(t, 200, fmt.Sprintf("/jobs/%d/artifacts/objects.json", id))
	var exported struct{ Objects []map[string]any }
	if err := json.Unmarshal(whole.body, &exported); err != nil || len(exported.Objects) != 2 {
		t.Fatalf("objects.json: %v %s", err, whole.body)
	}
	part := c.bin(t, 206, fmt.Sprintf("/jobs/%d/artifacts/objects.json", id), "Range", "bytes=0-9")
	if string(part.body) != string(whole.body[:10]) || part.header.Get("Content-Range") != fmt.Sprintf("bytes 0-9/%d", len(whole.body)) {
		t.Fatalf("range: %q, Content-Range %q", part.body, part.header.Get("Content-Range"))
	}
	c.bin(t, 416, fmt.Sprintf("/jobs/%d/artifacts/objects.json", id), "Range", fmt.Sprintf("bytes=%d-", len(whole.body)))
	c.bin(t, 400, fmt.Sprintf("/jobs/%d/artifacts/..%%2F..%%2Flog.txt", id))
	c.bin(t, 400, fmt.Sprintf("/jobs/%d/artifacts/a%%2F..%%2F..%%2Flog.txt", id))
	c.bin(t, 400, fmt.Sprintf("/jobs/%d/artifacts/%%2Fetc%%2Fpasswd", id))
	c.bin(t, 404, fmt.Sprintf("/jobs/%d/artifacts/missing.json", id))
	z := c.bin(t, 200, fmt.Sprintf("/jobs/%d/artifacts.zip", id))
	zr, err := zip.NewReader(bytes.NewReader(z.body), int64(len(z.body)))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "objects.json" {
		t.Fatalf("zip: %v", err)
	}
	if log := c.bin(t, 200, fmt.Sprintf("/jobs/%d/logs", id)); !strings.Contains(string(log.body), "exported 2 objects") {
		t.Fatalf("log = %q", log.body)
	}
	var metrics []map[string]any
	if err := json.Unmarshal(c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/metrics?maxItems=1", id), "").body, &metrics); err != nil || len(metrics) != 1 {
		t.Fatalf("metrics: %v %v", err, metrics)
	}
	if p := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/progress", id), "").object(t); p["progress"] != float64(1) {
		t.Fatalf("progress = %v", p)
	}
	if ids := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/objectIds", id), ""); string(ids.body) != "[201,202]" {
		t.Fatalf("objectIds = %s", ids.body)
	}

	// Transitions: a finished job cannot be killed; restart runs it again.
	if d := c.do(t, 400, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":0}`).detail(t); !strings.Contains(d, "finished") {
		t.Fatalf("kill of a finished job: %q", d)
	}
	c.do(t, 400, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":3}`)
	c.do(t, 200, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":1,"retainUntil":"2030-01-02T03:04:05Z"}`)
	if j := c.waitJob(t, id); j["state"] != float64(2) || j["restarts"] != float64(1) || j["retainUntil"] != "2030-01-02T03:04:05Z" {
		t.Fatalf("restarted job = %v", j)
	}
	c.do(t, 200, "DELETE", fmt.Sprintf("/jobs/%d", id), "")
	if del := c.do(t, 200, "GET", "/jobs?isDeleted=true", "").object(t); del["count"] != float64(1) {
		t.Fatalf("deleted jobs = %v", del)
	}

	// Refusals: unknown definition, an object that is no definition,
	// unknown branch and job.
	c.do(t, 404, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":999999,"language":0}`)
	c.do(t, 404, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":201,"language":0}`)
	c.do(t, 404, "POST", "/jobs", `{"branchId":999999,"jobDefinitionId":1200,"language":0}`)
	c.do(t, 404, "GET", "/jobs/999999", "")
	c.do(t, 404, "PATCH", "/jobs/999999", `{"state":1}`)
	c.bin(t, 404, "/jobs/999999/logs")

	// Import from a job input uploaded in two chunks, then export as CSV.
	typ := c.do(t, 201, "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"book"}}]}`).object(t)
	typeID := int64(typ["createdObjectIds"].([]any)[0].(float64))
	input := fmt.Sprintf(`{"objects":[{"meta":{"typeRef":%d},"values":[{"attribute":1000,"language":201,"variant":0,"value":"One"}]},`, typeID)
	first := c.upload(t, 200, "/jobInput", []byte(input)).object(t)
	token, _ := first["token"].(string)
	rest := fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Two"}]}]}`, typeID)
	second := c.upload(t, 200, "/jobInput/"+token, []byte(rest)).object(t)
	if second["size"] != float64(len(input)+len(rest)) || second["token"] != token {
		t.Fatalf("continued input = %v", second)
	}
	c.upload(t, 400, "/jobInput/"+strings.Repeat("0", 32), []byte("x"))
	imp := c.do(t, 200, "POST", "/jobs", fmt.Sprintf(`{"branchId":4,"jobDefinitionId":1202,"inputFile":{"token":%q,"name":"input.json"},"language":0}`, token)).object(t)
	if j := c.waitJob(t, int64(imp["id"].(float64))); j["state"] != float64(2) {
		t.Fatalf("import job = %v", j)
	}
	books := c.do(t, 200, "GET", "/branches/4/types/book/objects", "").object(t)
	if books["count"] != float64(2) {
		t.Fatalf("imported objects = %v", books)
	}
	exp := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1201,"parameters":[{"name":"type","values":["book"]}],"language":0}`).object(t)
	expID := int64(exp["id"].(float64))
	if j := c.waitJob(t, expID); j["state"] != float64(2) {
		t.Fatalf("csv export = %v", j)
	}
	csv := c.bin(t, 200, fmt.Sprintf("/jobs/%d/artifacts/objects.csv", expID))
	if lines := strings.Split(strings.TrimSpace(string(csv.body)), "\n"); len(lines) != 3 || !strings.Contains(string(csv.body), ",One\n") {
		t.Fatalf("objects.csv = %s", csv.body)
	}
	c.do(t, 200, "DELETE", "/jobInput/"+token, "")
	c.do(t, 400, "DELETE", "/jobInput/not-a-token", "")
	c.do(t, 400, "POST", "/jobs", fmt.Sprintf(`{"branchId":4,"jobDefinitionId":1202,"inputFile":{"token":%q},"language":0}`, token))

	// jobCleanupFiles runs files.Service.Cleanup (its removals are tested
	// in services/internal/app/files_test.go on both setups); a dry run
	// succeeds and an invalid parameter fails the job.
	cl := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1204,"parameters":[{"name":"dryRun","values":["true"]}],"language":0}`).object(t)
	if j := c.waitJob(t, int64(cl["id"].(float64))); j["state"] != float64(2) {
		t.Fatalf("cleanup job = %v", j)
	}
	cl = c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1204,"parameters":[{"name":"minAge","values":["soon"]}],"language":0}`).object(t)
	if j := c.waitJob(t, int64(cl["id"].(float64))); j["state"] != float64(3) || !strings.Contains(j["stateMessage"].(string), "minAge") {
		t.Fatalf("cleanup job with an invalid minAge = %v", j)
	}
}
