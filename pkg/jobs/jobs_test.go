package jobs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
)

var bg = context.Background()

// def returns the id of the built-in definition api.
func (e *env) def(t *testing.T, api string) int64 {
	t.Helper()
	o, err := e.content.GetObject(bg, "4", api, content.ReadOptions{})
	if err != nil {
		t.Fatalf("definition %s: %v", api, err)
	}
	return o.ID
}

func (e *env) create(t *testing.T, r jobs.CreateRequest) jobs.Job {
	t.Helper()
	if r.Branch == 0 {
		r.Branch = 4
	}
	if r.Caller == nil {
		r.Caller = &auth.Principal{Name: "editor"}
	}
	j, err := e.svc.Create(bg, r)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return j
}

func readAll(t *testing.T, rc io.ReadCloser, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExportRuns: a created job is New, runs, succeeds with its artifact,
// log, progress and metrics; the artifact reads back whole, as a range
// and in the zip.
func TestExportRuns(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "r1", nil)
		j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindExportJSON), Objects: []int64{201, 202}})
		if j.ID <= 0 || j.State != jobs.StateNew || j.GUID == "" || j.Queued != 1 {
			t.Fatalf("created job %+v", j)
		}
		j = e.waitDone(t, j.ID)
		if j.State != jobs.StateSucceeded || j.Started == nil || j.Finished == nil || j.InstanceID == "" {
			t.Fatalf("finished job: state %d %q, started %v, finished %v, instance %q", j.State, j.StateMessage, j.Started, j.Finished, j.InstanceID)
		}
		// The runner's counters (cms_jobs_*) count the job once its final
		// state is stored, so they may lag the state read just now.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			s := e.runners[0].Stats()
			if s.Succeeded == 1 && s.Failed == 0 && s.Running == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("runner stats %+v after one successful job", s)
			}
		}
		if j.Progress == nil || *j.Progress != 1 || len(j.Metrics) == 0 || len(j.Artifacts) != 1 || j.Artifacts[0] != "objects.json" {
			t.Fatalf("progress %v, %d metrics, artifacts %v", j.Progress, len(j.Metrics), j.Artifacts)
		}
		a, err := e.svc.OpenArtifact(bg, j, "objects.json", nil)
		body := readAll(t, a.ReadCloser, err)
		var doc struct {
			Objects []struct {
				Meta   struct{ ID, TypeRef int64 }
				Values []json.RawMessage
			}
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("objects.json: %v\n%s", err, body)
		}
		if len(doc.Objects) != 2 || doc.Objects[0].Meta.ID != 201 || doc.Objects[1].Meta.TypeRef != content.TypeLanguage || len(doc.Objects[0].Values) == 0 {
			t.Fatalf("objects.json = %s", body)
		}
		part, err := e.svc.OpenArtifact(bg, j, "objects.json", &jobs.Range{Offset: 2, Length: 5})
		if got := readAll(t, part.ReadCloser, err); string(got) != string(body[2:7]) || part.Size != int64(len(body)) {
			t.Fatalf("range read %q (size %d), want %q", got, part.Size, body[2:7])
		}
		if _, err := e.svc.OpenArtifact(bg, j, "../../log.txt", nil); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("traversal: %v", err)
		}
		if _, err := e.svc.OpenArtifact(bg, j, "other.json", nil); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("unknown artifact: %v", err)
		}
		if _, err := e.svc.OpenArtifact(bg, j, "objects.json", &jobs.Range{Offset: int64(len(body)), Length: -1}); !errors.Is(err, jobs.ErrRangeNotSatisfiable) {
			t.Fatalf("range past the end: %v", err)
		}
		var zbuf bytes.Buffer
		if err := e.svc.WriteZip(bg, j, &zbuf); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
		if err != nil || len(zr.File) != 1 || zr.File[0].Name != "objects.json" {
			t.Fatalf("zip: %v %v", err, zr)
		}
		f, err := zr.File[0].Open()
		if got := readAll(t, f, err); !bytes.Equal(got, body) {
			t.Fatalf("zipped objects.json differs")
		}
		lg, err := e.svc.OpenLog(bg, j)
		if log := string(readAll(t, lg, err)); !strings.Contains(log, "exported 2 objects") || !strings.Contains(log, "succeeded") {
			t.Fatalf("log = %q", log)
		}
	})
}

// slowKind blocks until released or its context ends, counting runs.
type slowKind struct {
	started, finished atomic.Int32
	release           chan struct{}
}

func newSlow() *slowKind { return &slowKind{release: make(chan struct{})} }

func (s *slowKind) run(ctx context.Context, t *jobs.Task) error {
	s.started.Add(1)
	t.Logf("slow job waiting")
	t.SetProgress(0.5, "half way")
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.release:
	}
	s.finished.Add(1)
	return nil
}

// The slow kind stands in for jobCleanupFiles in these tests.
func slowKinds(s *slowKind) map[string]jobs.KindFunc {
	return map[string]jobs.KindFunc{jobs.KindCleanupFiles: s.run}
}

// TestKillRestartAndTransitions: kill a running job, restart it, and the
// transitions its state does not allow are ErrInvalid.
func TestKillRestartAndTransitions(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		slow := newSlow()
		e.runner(t, "r1", slowKinds(slow))
		j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindCleanupFiles)})
		j = e.wait(t, j.ID, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
		restart := jobs.RequestRestart
		if err := e.svc.Update(bg, j.ID, "boss", &restart, nil); !errors.Is(err, jobs.ErrInvalid) || !strings.Contains(err.Error(), "Running") {
			t.Fatalf("restart of a running job: %v", err)
		}
		lg, err := e.svc.OpenLog(bg, e.wait(t, j.ID, "logging", func(j jobs.Job) bool { return j.ProgressInfo == "half way" }))
		if log := string(readAll(t, lg, err)); !strings.Contains(log, "slow job waiting") {
			t.Fatalf("log while running = %q", log)
		}
		kill := jobs.StateKillRequest // the read-side code is taken too
		killed := time.Now()
		if err := e.svc.Update(bg, j.ID, "boss", &kill, nil); err != nil {
			t.Fatal(err)
		}
		j = e.waitDone(t, j.ID)
		// The runner reads the job's state every CheckEvery (50ms here, 1s
		// by default) and cancels the kind's context.
		took := time.Since(killed)
		t.Logf("kill request to Error in %v", took)
		if j.State != jobs.StateError || !strings.Contains(j.StateMessage, "killed by boss") || slow.finished.Load() != 0 || took > 5*time.Second {
			t.Fatalf("killed job: state %d %q after %v", j.State, j.StateMessage, took)
		}
		k0 := jobs.RequestKill
		if err := e.svc.Update(bg, j.ID, "boss", &k0, nil); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("kill of a finished job: %v", err)
		}
		bad := 7
		if err := e.svc.Update(bg, j.ID, "boss", &bad, nil); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("state 7: %v", err)
		}
		retain := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		restart5 := jobs.StateRestartRequest // the read-side code of a restart
		if err := e.svc.Update(bg, j.ID, "boss", &restart5, &retain); err != nil {
			t.Fatal(err)
		}
		close(slow.release)
		j = e.waitDone(t, j.ID)
		if j.State != jobs.StateSucceeded || j.Restarts != 1 || j.RetainUntil == nil || !j.RetainUntil.Equal(retain) {
			t.Fatalf("restarted job: state %d %q restarts %d retain %v", j.State, j.StateMessage, j.Restarts, j.RetainUntil)
		}
		if err := e.svc.Delete(bg, j.ID, "boss"); err != nil {
			t.Fatal(err)
		}
		yes := true
		page, err := e.svc.List(bg, jobs.Query{Deleted: &yes, Take: 10})
		if err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != j.ID {
			t.Fatalf("deleted list: %v %+v", err, page)
		}
		if _, err := e.svc.Get(bg, j.ID+1000); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("unknown job: %v", err)
		}
	})
}

// TestRunnerKilledMidJob: a runner that stops without acknowledging (a
// killed process) leaves its job Running; another runner gets it after
// the ack wait, takes it over (a restart) and completes it once.
func TestRunnerKilledMidJob(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		first := newSlow()
		stop := e.runner(t, "doomed", slowKinds(first))
		j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindCleanupFiles)})
		e.wait(t, j.ID, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
		stop()
		if j, _ := e.svc.Get(bg, j.ID); j.State != jobs.StateRunning || !strings.HasPrefix(j.InstanceID, "doomed/") {
			t.Fatalf("after the runner died: state %d instance %q", j.State, j.InstanceID)
		}
		second := newSlow()
		close(second.release)
		e.runner(t, "heir", slowKinds(second))
		j = e.waitDone(t, j.ID)
		if j.State != jobs.StateSucceeded || j.Restarts != 1 || !strings.HasPrefix(j.InstanceID, "heir/") ||
			!strings.Contains(j.StateMessage, "taken over") {
			t.Fatalf("recovered job: state %d %q restarts %d instance %q", j.State, j.StateMessage, j.Restarts, j.InstanceID)
		}
		if first.finished.Load() != 0 || second.started.Load() != 1 || second.finished.Load() != 1 {
			t.Fatalf("runs: first finished %d, second started %d finished %d", first.finished.Load(), second.started.Load(), second.finished.Load())
		}
		// Nothing is left in the queue to run it again.
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := e.queue.Pending(bg)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d queue messages left", n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestCreateRefusals: unknown branch or definition, an object that is no
// definition, a missing input and oversized lists.
func TestCreateRefusals(t *testing.T) {
	e := embedded(t)
	cases := []struct {
		name string
		r    jobs.CreateRequest
		want error
	}{
		{"unknown definition", jobs.CreateRequest{Branch: 4, Definition: 999999}, jobs.ErrNotFound},
		{"no definition", jobs.CreateRequest{Branch: 4, Definition: 201}, jobs.ErrNotFound},
		{"unknown branch", jobs.CreateRequest{Branch: 999999, Definition: 1200}, content.ErrNotFound},
		{"zero definition", jobs.CreateRequest{Branch: 4}, jobs.ErrInvalid},
		{"negative object", jobs.CreateRequest{Branch: 4, Definition: 1200, Objects: []int64{-1}}, jobs.ErrInvalid},
		{"too many objects", jobs.CreateRequest{Branch: 4, Definition: 1200, Objects: make([]int64, 10001)}, jobs.ErrTooLarge},
		{"unnamed parameter", jobs.CreateRequest{Branch: 4, Definition: 1200, Parameters: []jobs.Parameter{{}}}, jobs.ErrInvalid},
		{"missing input", jobs.CreateRequest{Branch: 4, Definition: 1202, Input: &jobs.InputFile{Token: strings.Repeat("a", 32)}}, jobs.ErrInvalid},
		{"malformed input token", jobs.CreateRequest{Branch: 4, Definition: 1202, Input: &jobs.InputFile{Token: "../x"}}, jobs.ErrInvalid},
		{"no language", jobs.CreateRequest{Branch: 4, Definition: 1200, Language: 4}, jobs.ErrInvalid},
		{"unknown language", jobs.CreateRequest{Branch: 4, Definition: 1200, Language: 999999}, jobs.ErrInvalid},
		{"negative language", jobs.CreateRequest{Branch: 4, Definition: 1200, Language: -201}, jobs.ErrInvalid},
	}
	for _, c := range cases {
		if _, err := e.svc.Create(bg, c.r); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// The job's language gives its uiCulture (its ISO code), kept in the store.
	for lang, want := range map[int64]string{0: "", content.LanguageEnUS: "en-US", content.LanguageDeDE: "de-DE"} {
		j := e.create(t, jobs.CreateRequest{Definition: 1200, Language: lang})
		if got, err := e.svc.Get(bg, j.ID); err != nil || j.UICulture != want || got.UICulture != want || got.Language != lang {
			t.Errorf("language %d: uiCulture %q, stored %q (%v), want %q", lang, j.UICulture, got.UICulture, err, want)
		}
	}
}

// TestReleaseDeadAfterRestart: the embedded `cms run` restarted after a
// kill -9 releases what its dead runner held (Queue.ReleaseDead), so the
// job is taken over at once instead of after the ack wait (here a
// minute, far beyond the test's wait).
func TestReleaseDeadAfterRestart(t *testing.T) {
	e := embedded(t)
	first := newSlow()
	stop := e.runnerWait(t, "dead", 1, time.Minute, slowKinds(first))
	j := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindCleanupFiles)})
	e.wait(t, j.ID, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	stop()
	if err := e.queue.ReleaseDead(bg); err != nil {
		t.Fatal(err)
	}
	second := newSlow()
	close(second.release)
	e.runnerWait(t, "restarted", 1, time.Minute, slowKinds(second))
	start := time.Now()
	j = e.waitDone(t, j.ID)
	if j.State != jobs.StateSucceeded || j.Restarts != 1 || second.finished.Load() != 1 || time.Since(start) > 30*time.Second {
		t.Fatalf("job after restart: state %d %q restarts %d after %s", j.State, j.StateMessage, j.Restarts, time.Since(start))
	}
}
