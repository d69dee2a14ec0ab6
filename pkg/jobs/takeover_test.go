package jobs_test

import (
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestImportResumesAfterTakeover: a runner killed in the middle of an
// import leaves a checkpoint written with each committed batch; the runner
// that takes the job over skips exactly those objects, so every input
// object exists once, none twice and none missing.
func TestImportResumesAfterTakeover(t *testing.T) {
	const n, batch = 4000, 40
	setups(t, func(t *testing.T, e *env) {
		_, typ, err := e.content.CreateObjects(bg, "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
			[]content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr("resumed")}})
		if err != nil {
			t.Fatal(err)
		}
		token := e.uploadInput(t, testenv.ImportInputBytes(n, typ[0]), 1<<20)
		stop := e.runner(t, "doomed", nil)
		j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindImportJSON), Input: &jobs.InputFile{Token: token},
			Parameters: []jobs.Parameter{{Name: "batchSize", Values: []string{strconv.Itoa(batch)}}}})
		mid := e.wait(t, j.ID, "checkpointed twice", func(j jobs.Job) bool {
			return j.Terminal() || j.Checkpoint != nil && j.Checkpoint.Consumed >= 2*batch
		})
		stop()
		if mid.Terminal() {
			t.Fatalf("the import finished before its runner could be stopped: %d %q", mid.State, mid.StateMessage)
		}
		killed, _ := e.svc.Get(bg, j.ID)
		if killed.State != jobs.StateRunning || killed.Checkpoint == nil || killed.Checkpoint.Consumed%batch != 0 ||
			killed.Checkpoint.Consumed >= n {
			t.Fatalf("after the runner died: state %d checkpoint %+v", killed.State, killed.Checkpoint)
		}
		e.runner(t, "heir", nil)
		done := e.waitDone(t, j.ID)
		if done.State != jobs.StateSucceeded || done.Restarts != 1 || done.Checkpoint == nil ||
			*done.Checkpoint != (jobs.Checkpoint{Consumed: n, Created: n}) {
			t.Fatalf("resumed import: state %d %q restarts %d checkpoint %+v", done.State, done.StateMessage, done.Restarts, done.Checkpoint)
		}
		rc, err := e.svc.OpenLog(bg, done)
		if log := string(readAll(t, rc, err)); !strings.Contains(log, fmt.Sprintf("resuming after %d input objects", killed.Checkpoint.Consumed)) {
			t.Errorf("log does not say where it resumed:\n%s", log)
		}
		names := map[string]int{}
		q := content.ListQuery{Take: content.MaxTake}
		for {
			page, err := e.content.GetTypedObjects(bg, "4", "resumed", q)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Objects {
				for _, v := range o.Values {
					if v.Attribute == 1000 {
						var s string
						_ = json.Unmarshal(v.JSON, &s)
						names[s]++
					}
				}
			}
			if q.Continue = page.Continue; q.Continue == "" {
				break
			}
		}
		for i := 0; i < n; i++ {
			if c := names[fmt.Sprintf("item %d", i)]; c != 1 {
				t.Fatalf("item %d exists %d times (%d distinct names)", i, c, len(names))
			}
		}
		if len(names) != n {
			t.Fatalf("%d distinct names, want %d", len(names), n)
		}
	})
}

// TestLostTooOftenIsError: a job whose runner was lost more often than
// MaxAttempts is not run again but ends as Error saying so, so it is never
// left Running.
func TestLostTooOftenIsError(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		first := newSlow()
		stop := e.runner(t, "doomed", slowKinds(first))
		j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindCleanupFiles)})
		e.wait(t, j.ID, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
		stop()
		second := newSlow()
		close(second.release)
		e.runnerOpts(t, jobs.RunnerOptions{Instance: "strict", MaxAttempts: 1, AckWait: 1500 * time.Millisecond,
			CheckEvery: 50 * time.Millisecond, Kinds: slowKinds(second)})
		j = e.waitDone(t, j.ID)
		if j.State != jobs.StateError || !strings.Contains(j.StateMessage, "given up") || second.started.Load() != 0 {
			t.Fatalf("job lost once with MaxAttempts 1: state %d %q, run %d times again", j.State, j.StateMessage, second.started.Load())
		}
	})
}
