package jobs_test

import (
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
)

// TestRemoveExpired: a finished job whose retainUntil has passed loses its
// log and artifacts and is marked deleted; a job retained longer and a
// job without retainUntil are kept; a removed job cannot be restarted; a
// runner removes expired jobs on its own.
func TestRemoveExpired(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "r", nil)
		if _, _, err := e.content.CreateObjects(bg, "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
			[]content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr("kept")}}); err != nil {
			t.Fatal(err)
		}
		export := func() jobs.Job {
			j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindExportJSON),
				Parameters: []jobs.Parameter{{Name: "type", Values: []string{"kept"}}}})
			if j = e.waitDone(t, j.ID); j.State != jobs.StateSucceeded || len(j.Artifacts) == 0 {
				t.Fatalf("export: %d %q artifacts %v", j.State, j.StateMessage, j.Artifacts)
			}
			return j
		}
		old, young, forever := export(), export(), export()
		now := time.Now().UTC()
		past, future := now.Add(-time.Hour), now.Add(time.Hour)
		for id, until := range map[int64]time.Time{old.ID: past, young.ID: future} {
			if err := e.svc.Update(bg, id, "boss", nil, &until); err != nil {
				t.Fatal(err)
			}
		}
		blobCount := func(id int64) int {
			n := 0
			if err := e.blobs.Walk(bg, fmt.Sprintf("jobs/%d/", id), func(blobs.Info) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if blobCount(old.ID) == 0 {
			t.Fatal("the export stored no blobs")
		}
		n, err := e.svc.RemoveExpired(bg, now)
		if err != nil || n != 1 {
			t.Fatalf("RemoveExpired = %d, %v; want 1", n, err)
		}
		got, _ := e.svc.Get(bg, old.ID)
		if !got.Deleted || got.Removed == nil || len(got.Artifacts) != 0 || !strings.Contains(got.StateMessage, "removed") ||
			blobCount(old.ID) != 0 {
			t.Fatalf("expired job: deleted %v removed %v artifacts %v %q, %d blobs", got.Deleted, got.Removed, got.Artifacts,
				got.StateMessage, blobCount(old.ID))
		}
		for _, kept := range []jobs.Job{young, forever} {
			if got, _ := e.svc.Get(bg, kept.ID); got.Deleted || got.Removed != nil || len(got.Artifacts) == 0 || blobCount(kept.ID) == 0 {
				t.Fatalf("job %d should be kept: %+v", kept.ID, got)
			}
		}
		if n, err := e.svc.RemoveExpired(bg, now); err != nil || n != 0 {
			t.Fatalf("second RemoveExpired = %d, %v; want 0", n, err)
		}
		restart := jobs.RequestRestart
		if err := e.svc.Update(bg, old.ID, "boss", &restart, nil); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("restart of a removed job: %v", err)
		}
		// Runners remove expired jobs by themselves, every RemoveExpiredEvery.
		gone := time.Now().UTC().Add(-time.Second)
		if err := e.svc.Update(bg, young.ID, "boss", nil, &gone); err != nil {
			t.Fatal(err)
		}
		e.runnerOpts(t, jobs.RunnerOptions{Instance: "sweeper", RemoveExpiredEvery: 50 * time.Millisecond})
		if j := e.wait(t, young.ID, "removed by a runner", func(j jobs.Job) bool { return j.Removed != nil }); !j.Deleted || blobCount(young.ID) != 0 {
			t.Fatalf("job removed by the runner: deleted %v, %d blobs", j.Deleted, blobCount(young.ID))
		}
		if got, _ := e.svc.Get(bg, forever.ID); got.Removed != nil {
			t.Fatal("the runner removed a job without retainUntil")
		}
	})
}
