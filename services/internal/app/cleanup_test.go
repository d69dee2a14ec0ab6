package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// runCleanupScenario runs jobCleanupFiles over the files scenario's
// content: keep names a file a BPO references, drop one nothing references
// (both stored before the job). A dry run removes nothing; a run with
// minAge 0s removes drop and keeps keep; the default min age keeps a
// fresh unreferenced upload.
func runCleanupScenario(t *testing.T, c filesClient, admin httpClient, keep, drop string) {
	runJob := func(params string) map[string]any {
		r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/jobs",
			`{"branchId":4,"jobDefinitionId":1204,"parameters":[`+params+`],"language":0}`)
		var job struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(r.body, &job); err != nil || job.ID == 0 {
			t.Fatalf("create cleanup job: %s", r.body)
		}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var j map[string]any
			r := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d", job.ID), "")
			if err := json.Unmarshal(r.body, &j); err != nil {
				t.Fatal(err)
			}
			if s := j["state"]; s == float64(2) || s == float64(3) {
				if s != float64(2) {
					t.Fatalf("cleanup job %s failed: %v", params, j)
				}
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("cleanup job did not finish: %v", j)
			}
		}
	}
	runJob(`{"name":"minAge","values":["0s"]},{"name":"dryRun","values":["true"]}`)
	c.get("/delivery/api/files/"+drop, http.StatusOK)
	r := c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, []byte("fresh and unreferenced"), "Extension", ".txt", "Commit", "true")
	runJob(`{"name":"minAge","values":["0s"]}`)
	c.get("/delivery/api/files/"+drop, http.StatusNotFound)
	c.get("/delivery/api/files/"+keep, http.StatusOK)
	c.get("/delivery/api/branches/4/thumbnails/photo?size=64", http.StatusOK)
	// The fresh upload went with the others (min age 0); a new one
	// survives the default min age.
	c.get("/delivery/api/files/"+*r.GUID+".txt", http.StatusNotFound)
	r = c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, []byte("another fresh one"), "Extension", ".txt", "Commit", "true")
	runJob(``)
	c.get("/delivery/api/files/"+*r.GUID+".txt", http.StatusOK)
}
