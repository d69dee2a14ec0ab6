package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/jobs"
)

// TestProgressBetweenChecks: a running job's progress and its small log
// are stored every ProgressEvery, long before the next state check (10 s
// here), so a short job's bar and log move while it runs; a log beyond
// 256 KiB waits for the check.
func TestProgressBetweenChecks(t *testing.T) {
	e := embedded(t)
	step := make(chan struct{})
	release := make(chan struct{})
	kind := func(ctx context.Context, task *jobs.Task) error {
		task.Logf("first line")
		task.SetProgress(0.25, "a quarter")
		<-step
		task.Logf("%s", strings.Repeat("x", 300<<10))
		task.SetProgress(0.75, "three quarters")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
		}
		return nil
	}
	e.runnerOpts(t, jobs.RunnerOptions{Instance: "p", AckWait: 30 * time.Second, CheckEvery: 10 * time.Second,
		ProgressEvery: 50 * time.Millisecond, Kinds: map[string]jobs.KindFunc{jobs.KindCleanupFiles: kind}})
	j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindCleanupFiles)})
	defer close(release)
	began := time.Now()
	j = e.wait(t, j.ID, "a quarter done", func(j jobs.Job) bool { return j.ProgressInfo == "a quarter" })
	if took := time.Since(began); took > 5*time.Second || j.Progress == nil || *j.Progress != 0.25 {
		t.Fatalf("progress %v after %v, want 0.25 long before the 10-s check", j.Progress, took)
	}
	lg, err := e.svc.OpenLog(bg, j)
	if log := string(readAll(t, lg, err)); !strings.Contains(log, "first line") {
		t.Fatalf("the small log was not stored with the progress: %q", log)
	}
	close(step)
	j = e.wait(t, j.ID, "three quarters done", func(j jobs.Job) bool { return j.ProgressInfo == "three quarters" })
	lg, err = e.svc.OpenLog(bg, j)
	if log := readAll(t, lg, err); len(log) > 256<<10 {
		t.Fatalf("a log of %d bytes was stored between the checks", len(log))
	}
}
