package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// releasedObjects is the size of the release TestScheduledRelease
// schedules (issue 33: 5,000 objects visible within 2 s of its time).
const releasedObjects = 5000

// releaseLead is how far ahead the test schedules the release: time for
// the readers to start.
const releaseLead = 3 * time.Second

// TestScheduledReleaseEmbedded: on cms run (SQLite, Bleve, embedded
// NATS), a release of 5,000 objects scheduled over HTTP goes live at its
// time, whole: Delivery and Index, read continuously, answer none of it
// before the time and all or none after; the time from the release's time
// to Delivery serving it is logged.
func TestScheduledReleaseEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	runScheduledRelease(t, "http://"+startConfigured(t, cfg).HTTPAddr())
}

// TestScheduledReleaseDistributed: the same on PostgreSQL, NATS,
// Elasticsearch and Redis.
func TestScheduledReleaseDistributed(t *testing.T) {
	config, _ := isolatedDistributed(t, "release")
	runScheduledRelease(t, "http://"+startConfigured(t, config(TargetAll)).HTTPAddr())
}

// scheduledJob is the part of a CmsJob the test reads.
type scheduledJob struct {
	ID            int64   `json:"id"`
	State         int     `json:"state"`
	DefinitionRef int64   `json:"definitionRef"`
	BranchRef     int64   `json:"branchRef"`
	StartAfter    *string `json:"startAfter"`
	Started       *string `json:"started"`
	StateMessage  *string `json:"stateMessage"`
}

func runScheduledRelease(t *testing.T, base string) {
	admin := httpClient{t, base, "admin", "test-password"}
	itemType, branch := seedChild(t, admin, "story", "Story", "Launch", releasedObjects)
	child := fmt.Sprintf("/apis/cms/v1/branches/%d", branch)

	// Refusals: no time, a time past, the default branch, a bad policy.
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{"at":"2001-01-01T00:00:00Z"}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, "/apis/cms/v1/branches/4/schedule", `{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`","conflicts":"maybe"}`, nil)
	admin.call(http.StatusRequestEntityTooLarge, http.MethodPost, child+"/schedule",
		`{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`","comment":"`+strings.Repeat("x", 1025)+`"}`, nil)

	at := time.Now().Add(releaseLead).UTC().Truncate(time.Millisecond)
	var job scheduledJob
	admin.call(http.StatusOK, http.MethodPost, child+"/schedule",
		`{"at":"`+at.Format(time.RFC3339Nano)+`","comment":"launch"}`, &job)
	if job.State != 0 || job.DefinitionRef != 1205 || job.BranchRef != branch || job.StartAfter == nil {
		t.Fatalf("scheduled job: %+v", job)
	}
	if got, err := time.Parse(time.RFC3339Nano, *job.StartAfter); err != nil || !got.Equal(at) {
		t.Fatalf("startAfter %s, want %s", *job.StartAfter, at.Format(time.RFC3339Nano))
	}
	admin.call(http.StatusUnprocessableEntity, http.MethodPost, child+"/schedule", `{"at":"`+at.Add(time.Hour).Format(time.RFC3339)+`"}`, nil)
	var listed struct {
		CmsJobs []scheduledJob `json:"cmsJobs"`
	}
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs?definitionRef=1205&state=0&branchId=%d", branch), "", &listed)
	if len(listed.CmsJobs) != 1 || listed.CmsJobs[0].ID != job.ID || listed.CmsJobs[0].StartAfter == nil {
		t.Fatalf("the scheduled releases of the branch: %+v", listed.CmsJobs)
	}

	reads := readParent(t, admin, "story", itemType, releasedObjects, at)
	visible := reads.wait(at.Add(60 * time.Second))
	var ran scheduledJob
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d", job.ID), "", &ran)
	logs := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d/logs", job.ID), "")
	if !visible {
		t.Fatalf("Delivery did not serve the %d released objects within 60 s of the release's time: %v; job %+v; log:\n%s", releasedObjects, reads.seen, ran, logs.body)
	}
	reads.check(t, "release")
	if ran.State != 2 || ran.Started == nil {
		t.Fatalf("the release job after its time: %+v", ran)
	}
	started, _ := time.Parse(time.RFC3339Nano, *ran.Started)
	if started.Before(at) {
		t.Errorf("the release started at %s, before its time %s", *ran.Started, at.Format(time.RFC3339Nano))
	}
	for _, want := range []string{"went live in transaction", fmt.Sprintf("%d objects (%d created, 0 deleted, 0 updated)", releasedObjects, releasedObjects),
		fmt.Sprintf("story (%d) %d", itemType, releasedObjects)} {
		if !strings.Contains(string(logs.body), want) {
			t.Errorf("the job's log lacks %q:\n%s", want, logs.body)
		}
	}
	t.Logf("release of %d objects: the job started %s after its time, visible in Index %s and in Delivery %s after it; reads %v; log:\n%s",
		releasedObjects, started.Sub(at).Round(time.Millisecond), reads.indexedAt.Sub(at).Round(time.Millisecond),
		reads.visibleAt.Sub(at).Round(time.Millisecond), reads.seen, logs.body)
}
