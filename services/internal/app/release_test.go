package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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
	itemType := admin.create(obj(0, "story", v(1000, 201, "Story"))).CreatedObjectIDs[0]
	r := admin.must(http.StatusOK, http.MethodPost, "/apis/cms/v1/branches",
		`{"comment":"branch","values":[`+v(1000, 201, "Launch")+`,`+v(4000, 0, 4)+`]}`)
	var br struct {
		Meta struct {
			ID int64 `json:"id"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &br); err != nil || br.Meta.ID == 0 {
		t.Fatalf("create branch: %s", r.body)
	}
	child := fmt.Sprintf("/apis/cms/v1/branches/%d", br.Meta.ID)
	var last write
	for start := 0; start < releasedObjects; start += 1000 {
		objs := make([]string, 0, 1000)
		for i := start; i < start+1000; i++ {
			objs = append(objs, obj(itemType, "", v(1000, 201, fmt.Sprintf("story %d", i))))
		}
		res := admin.must(http.StatusCreated, http.MethodPost, child+"/objects", `{"objects":[`+strings.Join(objs, ",")+`]}`)
		if err := json.Unmarshal(res.body, &last); err != nil {
			t.Fatal(err)
		}
	}
	wait := fmt.Sprintf(`"minChangeTrackingVersion":%d,"maxWaitTime":"00:01:00"`, last.Transaction.ID)
	admin.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount", `{"filter":{}, `+wait+`}`)

	// Refusals: no time, a time past, the default branch, a bad policy.
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{"at":"2001-01-01T00:00:00Z"}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, "/apis/cms/v1/branches/4/schedule", `{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`, nil)
	admin.call(http.StatusBadRequest, http.MethodPost, child+"/schedule", `{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`","conflicts":"maybe"}`, nil)
	admin.call(http.StatusRequestEntityTooLarge, http.MethodPost, child+"/schedule",
		`{"at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`","comment":"`+strings.Repeat("x", 1025)+`"}`, nil)

	deliveryCount := func() (int, error) {
		res := admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/types/story/count", "")
		var c struct {
			Count int `json:"count"`
		}
		return c.Count, json.Unmarshal(res.body, &c)
	}
	indexCount := func() (int, error) {
		res := admin.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objectCount",
			fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]}}`, itemType))
		var c struct {
			Count int `json:"count"`
		}
		return c.Count, json.Unmarshal(res.body, &c)
	}
	if n, err := deliveryCount(); err != nil || n != 0 {
		t.Fatalf("Delivery counts %d stories on the parent before the release (%v)", n, err)
	}

	at := time.Now().Add(releaseLead).UTC().Truncate(time.Millisecond)
	var job scheduledJob
	admin.call(http.StatusOK, http.MethodPost, child+"/schedule",
		`{"at":"`+at.Format(time.RFC3339Nano)+`","comment":"launch"}`, &job)
	if job.State != 0 || job.DefinitionRef != 1205 || job.BranchRef != br.Meta.ID || job.StartAfter == nil {
		t.Fatalf("scheduled job: %+v", job)
	}
	if got, err := time.Parse(time.RFC3339Nano, *job.StartAfter); err != nil || !got.Equal(at) {
		t.Fatalf("startAfter %s, want %s", *job.StartAfter, at.Format(time.RFC3339Nano))
	}
	admin.call(http.StatusUnprocessableEntity, http.MethodPost, child+"/schedule", `{"at":"`+at.Add(time.Hour).Format(time.RFC3339)+`"}`, nil)
	var listed struct {
		CmsJobs []scheduledJob `json:"cmsJobs"`
	}
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs?definitionRef=1205&state=0&branchId=%d", br.Meta.ID), "", &listed)
	if len(listed.CmsJobs) != 1 || listed.CmsJobs[0].ID != job.ID || listed.CmsJobs[0].StartAfter == nil {
		t.Fatalf("the scheduled releases of the branch: %+v", listed.CmsJobs)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]map[int]int{"delivery": {}, "index": {}}
	var early []string
	var visibleAt, indexedAt time.Time
	for name, read := range map[string]func() (int, error){"delivery": deliveryCount, "index": indexCount} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				sent := time.Now()
				n, err := read()
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				mu.Lock()
				seen[name][n]++
				if n != 0 && sent.Before(at) {
					early = append(early, fmt.Sprintf("%s answered %d to a read sent %s before the release's time", name, n, at.Sub(sent)))
				}
				if name == "delivery" && n == releasedObjects && visibleAt.IsZero() {
					visibleAt = time.Now()
				}
				if name == "index" && n == releasedObjects && indexedAt.IsZero() {
					indexedAt = time.Now()
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	deadline := at.Add(60 * time.Second)
	for {
		mu.Lock()
		done := !visibleAt.IsZero() && seen["index"][releasedObjects] > 0
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()

	var ran scheduledJob
	admin.call(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d", job.ID), "", &ran)
	logs := admin.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/apis/cms/v1/jobs/%d/logs", job.ID), "")
	mu.Lock()
	defer mu.Unlock()
	if visibleAt.IsZero() {
		t.Fatalf("Delivery did not serve the %d released objects within 60 s of the release's time: %v; job %+v; log:\n%s", releasedObjects, seen, ran, logs.body)
	}
	for _, e := range early {
		t.Error(e)
	}
	for name, counts := range seen {
		for n, times := range counts {
			if n != 0 && n != releasedObjects {
				t.Errorf("%s answered %d of the %d released objects (%d times): a part of the release", name, n, releasedObjects, times)
			}
		}
		if counts[0] == 0 || counts[releasedObjects] == 0 {
			t.Errorf("%s was not read both before and after the release: %v", name, counts)
		}
	}
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
		releasedObjects, started.Sub(at).Round(time.Millisecond), indexedAt.Sub(at).Round(time.Millisecond),
		visibleAt.Sub(at).Round(time.Millisecond), seen, logs.body)
}
