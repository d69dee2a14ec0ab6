package management_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/cmsplatform/cms/pkg/testenv/setups"
	"github.com/cmsplatform/cms/services/internal/app"
)

// The job operations run against the whole system (`cms run`: the
// runner is in the process) over HTTP; every exchange is validated
// against NovaDB's document like the comment tests. The queue, the
// runner's crash recovery and both component setups are tested in
// pkg/jobs.

func TestJobsSQLite(t *testing.T) { runJobs(t, app.Component{}) }

// TestJobsDistributed runs them on PostgreSQL and NATS (the change stream,
// the job queue and the blobs in a namespace of their own).
func TestJobsDistributed(t *testing.T) {
	// The namespace (streams and the blobs bucket) is deleted afterwards.
	_, ns := setups.NATSBus(t, "mgmtjobs", "management-jobs-test")
	natsURL := testenv.URL(t, testenv.NATSURL)
	runJobs(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)}, func(c *app.Config) {
		c.Events = app.Component{Engine: app.EngineNATS, URL: natsURL, Prefix: ns}
		c.Blobs = app.Component{Engine: app.EngineNATSObjects, Prefix: ns}
	})
}

// jobOps are the 15 job operations; each must have a validated exchange.
var jobOps = []string{"Job_CreateJob", "Job_GetJobs", "Job_GetJob", "Job_UpdateJob", "Job_DeleteJob", "Job_GetJobMetrics",
	"Job_GetJobProgress", "Job_GetJobObjectIds", "Job_GetJobLogs", "Job_GetJobArtifacts", "Job_GetJobArtifact",
	"Job_GetJobArtifactsZip", "Job_JobInputUpload", "Job_JobInputContinue", "Job_JobInputCancel"}

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

// The job tests' systems take chunks of at most jobsUploadLimit bytes
// (maxUploadBytes, 413 beyond) and job inputs of at most jobsInputLimit
// (jobMaxInputBytes, 422 beyond).
const (
	jobsUploadLimit = 256 << 10
	jobsInputLimit  = 1 << 20
)

func runJobs(t *testing.T, store app.Component, more ...func(*app.Config)) {
	base, _ := startSystem(t, store, append(more, func(c *app.Config) {
		c.MaxUploadBytes, c.JobMaxInputBytes = jobsUploadLimit, jobsInputLimit
	})...)
	c := docClient{base: base, doc: contractDoc(t), seen: map[string]int{}}
	for _, op := range jobOps {
		c.seen[op] = 0
	}
	defer func() {
		for _, op := range jobOps {
			if c.seen[op] == 0 {
				t.Errorf("%s: no exchange validated against the document", op)
			}
		}
		t.Logf("validated exchanges: %v", c.seen)
	}()

	// Export two languages (system objects 201, 202) as JSON.
	r := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1200,"objIds":[201,202],"language":201}`).object(t)
	id := int64(r["id"].(float64))
	if id <= 0 || r["state"] != float64(0) || r["definitionRef"] != float64(1200) || r["user"] != "admin" || r["objectCount"] != float64(2) ||
		r["uiCulture"] != "en-US" {
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
	var all []map[string]any
	if err := json.Unmarshal(c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/metrics", id), "").body, &all); err != nil || len(all) < 2 ||
		all[len(all)-1]["upTime"] != metrics[0]["upTime"] || all[0]["memory"].(float64) <= 0 {
		t.Fatalf("all metrics: %v %v (the newest maxItems=1: %v)", err, all, metrics)
	}
	if b := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/metrics?maxItems=0", id), "").body; string(b) != "[]" {
		t.Fatalf("maxItems=0: %s", b)
	}
	c.undeclared(t, 400, "GET", fmt.Sprintf("/jobs/%d/metrics?maxItems=-1", id), "") // the document declares no 400 here
	if p := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/progress", id), "").object(t); p["progress"] != float64(1) || p["progressInfo"] != "done" {
		t.Fatalf("progress = %v", p)
	}
	if ids := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d/objectIds", id), ""); string(ids.body) != "[201,202]" {
		t.Fatalf("objectIds = %s", ids.body)
	}

	// Transitions: a finished job cannot be killed (0, or the read-side 4;
	// clients send both keys, retainUntil null); restart (1, or 5) runs it
	// again; 3 is no JobState.
	for _, body := range []string{`{"retainUntil":null,"state":0}`, `{"state":4}`} {
		if d := c.lenient(t, 400, "PATCH", fmt.Sprintf("/jobs/%d", id), body).detail(t); !strings.Contains(d, "finished") {
			t.Fatalf("kill of a finished job (%s): %q", body, d)
		}
	}
	if d := c.do(t, 400, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":3}`).detail(t); !strings.Contains(d, "state 3") {
		t.Fatalf("state 3: %q", d)
	}
	c.do(t, 200, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":1,"retainUntil":"2030-01-02T03:04:05Z"}`)
	if j := c.waitJob(t, id); j["state"] != float64(2) || j["restarts"] != float64(1) || j["retainUntil"] != "2030-01-02T03:04:05Z" {
		t.Fatalf("restarted job = %v", j)
	}
	c.lenient(t, 200, "PATCH", fmt.Sprintf("/jobs/%d", id), `{"state":5}`)
	if j := c.waitJob(t, id); j["state"] != float64(2) || j["restarts"] != float64(2) {
		t.Fatalf("job restarted with 5 = %v", j)
	}
	c.do(t, 200, "DELETE", fmt.Sprintf("/jobs/%d", id), "")
	if del := c.do(t, 200, "GET", "/jobs?isDeleted=true", "").object(t); del["count"] != float64(1) {
		t.Fatalf("deleted jobs = %v", del)
	}
	if j := c.do(t, 200, "GET", fmt.Sprintf("/jobs/%d", id), "").object(t); j["deleted"] != true {
		t.Fatalf("deleted job = %v", j)
	}
	listing(t, c, id)

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
	big := bytes.Repeat([]byte(" "), jobsUploadLimit+1)
	c.upload(t, 413, "/jobInput", big)
	c.upload(t, 413, "/jobInput/"+token, big)
	if again := c.upload(t, 200, "/jobInput/"+token, []byte(" ")).object(t); again["size"] != float64(len(input)+len(rest)+1) {
		t.Fatalf("input after a refused chunk = %v", again)
	}
	// Chunks within maxUploadBytes until the input passes jobMaxInputBytes:
	// 422, and the input keeps what it had.
	chunk := bytes.Repeat([]byte(" "), jobsUploadLimit-1024)
	grow := c.upload(t, 200, "/jobInput", chunk).object(t)
	growToken, size := grow["token"].(string), grow["size"].(float64)
	for size+float64(len(chunk)) <= jobsInputLimit {
		size = c.upload(t, 200, "/jobInput/"+growToken, chunk).object(t)["size"].(float64)
	}
	if d := c.upload(t, 422, "/jobInput/"+growToken, chunk).detail(t); !strings.Contains(d, "larger than expected") {
		t.Fatalf("input beyond jobMaxInputBytes: %q", d)
	}
	if kept := c.upload(t, 200, "/jobInput/"+growToken, []byte(" ")).object(t); kept["size"] != size+1 {
		t.Fatalf("input after the 422 = %v, want %v bytes", kept, size+1)
	}
	c.do(t, 200, "DELETE", "/jobInput/"+growToken, "")
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

	// jobReindex rebuilds the search index (a new index and the alias
	// switched) or, with "branch", that branch in place, and logs it.
	for _, params := range []string{`[]`, `[{"name":"branch","values":["4"]}]`} {
		rj := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1203,"parameters":`+params+`,"language":0}`).object(t)
		rid := int64(rj["id"].(float64))
		if j := c.waitJob(t, rid); j["state"] != float64(2) {
			t.Fatalf("reindex job %s = %v", params, j)
		}
		if log := c.bin(t, 200, fmt.Sprintf("/jobs/%d/logs", rid)); !strings.Contains(string(log.body), "reindexed") {
			t.Fatalf("reindex log = %q", log.body)
		}
	}

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

// listing creates 101 more jobs (dry-run clean-ups) after job first and
// pages through GET /jobs: 100 by default, newest first, continue tokens
// to the end; a trigger filter (no job has a trigger) finds none.
func listing(t *testing.T, c docClient, first int64) {
	t.Helper()
	var last int64
	for i := 0; i < 101; i++ {
		r := c.do(t, 200, "POST", "/jobs", `{"branchId":4,"jobDefinitionId":1204,"parameters":[{"name":"dryRun","values":["true"]}],"language":0}`).object(t)
		last = int64(r["id"].(float64))
	}
	var ids []int64
	path := "/jobs"
	for pages := 0; ; pages++ {
		page := c.do(t, 200, "GET", path, "").object(t)
		jobs := page["cmsJobs"].([]any)
		if pages == 0 && (len(jobs) != 100 || page["count"] != float64(100) || page["continue"] == nil) {
			t.Fatalf("first page: %d jobs, count %v, continue %v", len(jobs), page["count"], page["continue"])
		}
		for _, j := range jobs {
			ids = append(ids, int64(j.(map[string]any)["id"].(float64)))
		}
		next, _ := page["continue"].(string)
		if next == "" {
			break
		}
		if pages > 3 {
			t.Fatal("more pages than jobs")
		}
		path = "/jobs?continue=" + url.QueryEscape(next)
	}
	if len(ids) < 102 || ids[0] != last {
		t.Fatalf("listed %d jobs, newest %d; want at least 102, newest %d", len(ids), ids[0], last)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatalf("not newest first at %d: %d after %d", i, ids[i], ids[i-1])
		}
	}
	if !slices.Contains(ids, first) {
		t.Fatalf("job %d not listed", first)
	}
	if r := c.do(t, 200, "GET", "/jobs?triggerRef=7&take=5", "").object(t); r["count"] != float64(0) {
		t.Fatalf("jobs of trigger 7 = %v", r)
	}
	for id := last - 100; id <= last; id++ {
		c.waitJob(t, id)
	}
}
