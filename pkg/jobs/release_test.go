package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/store"
)

var releaseAdmin = &auth.Principal{Name: "admin", Admin: true}

// release makes a type, a child branch of 4 and n objects of the type on
// it; it returns the branch and the objects.
func (e *env) release(t *testing.T, name string, n int) (int64, []int64) {
	t.Helper()
	ch := content.Change{Caller: releaseAdmin}
	_, typ, err := e.content.CreateObjects(bg, "4", ch, []content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr(name + "Type")}})
	if err != nil {
		t.Fatal(err)
	}
	val := func(attr, lang int64, v any) content.ValueInput {
		b, _ := json.Marshal(v)
		return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
	}
	b, _, err := e.content.CreateBranch(bg, ch, []content.ValueInput{val(content.AttrName, content.LanguageEnUS, name),
		val(content.AttrBranchParent, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]content.ObjectInput, n)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: typ[0], Values: []content.ValueInput{val(content.AttrName, content.LanguageEnUS, fmt.Sprintf("item %d", i))}}
	}
	_, ids, err := e.content.CreateObjects(bg, strconv.FormatInt(b.ID, 10), ch, in)
	if err != nil {
		t.Fatal(err)
	}
	return b.ID, ids
}

func (e *env) log(t *testing.T, j jobs.Job) string {
	t.Helper()
	rc, err := e.svc.OpenLog(bg, j)
	return string(readAll(t, rc, err))
}

// onParent counts how many of ids branch 4 has.
func (e *env) onParent(t *testing.T, ids []int64) int {
	t.Helper()
	idents := make([]string, len(ids))
	for i, id := range ids {
		idents[i] = strconv.FormatInt(id, 10)
	}
	objs, err := e.content.GetObjects(bg, "4", idents, content.ReadOptions{})
	if err != nil && !errors.Is(err, content.ErrNotFound) {
		t.Fatal(err)
	}
	return len(objs)
}

// TestScheduledReleaseRunsOnceAtItsTime: with two runners, a release
// scheduled a moment ahead is promoted once, not before its time and
// promptly after it (the queue hands it out when due, no runner polls),
// and its log says what went live; a second schedule of the branch is
// refused; a release killed before its time never goes live.
func TestScheduledReleaseRunsOnceAtItsTime(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "first", nil)
		e.runner(t, "second", nil)
		branch, ids := e.release(t, "spring", 50)
		at := time.Now().Add(1500 * time.Millisecond)
		j, err := e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: strconv.FormatInt(branch, 10), At: at,
			Comment: "spring goes live", Caller: releaseAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if j.StartAfter == nil || !j.StartAfter.Equal(at.UTC()) || j.Definition != jobs.DefinitionPromoteRelease || j.State != jobs.StateNew {
			t.Fatalf("scheduled job: %+v", j)
		}
		_, err = e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: strconv.FormatInt(branch, 10), At: at.Add(time.Hour), Caller: releaseAdmin})
		if !errors.Is(err, jobs.ErrReleaseScheduled) || !strings.Contains(err.Error(), fmt.Sprintf("job %d", j.ID)) {
			t.Fatalf("second schedule of the branch: %v", err)
		}
		time.Sleep(time.Until(at) - 300*time.Millisecond)
		if n := e.onParent(t, ids); n != 0 {
			t.Fatalf("%d objects live before the release's time", n)
		}
		if cur, _ := e.svc.Get(bg, j.ID); cur.State != jobs.StateNew {
			t.Fatalf("job state %d before its time", cur.State)
		}
		done := e.waitDone(t, j.ID)
		if done.State != jobs.StateSucceeded || done.Restarts != 0 || done.Started == nil || done.Checkpoint == nil || done.Checkpoint.Transaction == 0 {
			t.Fatalf("release job: state %d %q restarts %d checkpoint %+v", done.State, done.StateMessage, done.Restarts, done.Checkpoint)
		}
		late := done.Started.Sub(at)
		if late < 0 || late > time.Second {
			t.Errorf("the release started %s after its time, want 0 to 1s", late)
		}
		t.Logf("started %s after its time", late)
		if n := e.onParent(t, ids); n != len(ids) {
			t.Fatalf("%d of %d objects live after the release", n, len(ids))
		}
		var succeeded int64
		for _, r := range e.runners {
			succeeded += r.Stats().Succeeded
		}
		if succeeded != 1 {
			t.Errorf("the runners finished %d jobs, want the one release", succeeded)
		}
		log := e.log(t, done)
		for _, want := range []string{fmt.Sprintf("went live in transaction %d on branch 4", done.Checkpoint.Transaction),
			"50 objects (50 created, 0 deleted, 0 updated)", "springType (", "started "} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
		tx, err := e.st.GetTransaction(bg, done.Checkpoint.Transaction)
		if err != nil || tx.Comment != "spring goes live" || tx.Branch != 4 {
			t.Errorf("the release's transaction: %+v %v", tx, err)
		}

		// Killed before its time: never goes live.
		later, more := e.release(t, "summer", 5)
		k, err := e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: strconv.FormatInt(later, 10), At: time.Now().Add(700 * time.Millisecond), Caller: releaseAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Update(bg, k.ID, "admin", ptr(jobs.RequestKill), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1200 * time.Millisecond)
		if cur, _ := e.svc.Get(bg, k.ID); cur.State != jobs.StateError || cur.Started != nil || e.onParent(t, more) != 0 {
			t.Fatalf("killed release: state %d started %v, %d objects live", cur.State, cur.Started, e.onParent(t, more))
		}
		// Rescheduled: a new schedule; the killed one cannot come back
		// beside it.
		again, err := e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: strconv.FormatInt(later, 10), At: time.Now().Add(time.Hour), Caller: releaseAdmin})
		if err != nil {
			t.Fatalf("reschedule after the kill: %v", err)
		}
		if err := e.svc.Update(bg, k.ID, "admin", ptr(jobs.RequestRestart), nil); !errors.Is(err, jobs.ErrReleaseScheduled) {
			t.Fatalf("restart of the killed release beside job %d: %v", again.ID, err)
		}
	})
}

// TestReleaseRefusals: a release needs a child branch, a time within the
// limits and the write grant on the branch and its parent; a release
// whose promote meets conflicts fails without writing, its log saying why.
func TestReleaseRefusals(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "only", nil)
		branch, ids := e.release(t, "autumn", 3)
		b := strconv.FormatInt(branch, 10)
		now := time.Now()
		for _, c := range []struct {
			name string
			r    jobs.ScheduleRequest
			want error
		}{
			{"no time", jobs.ScheduleRequest{Branch: b, Caller: releaseAdmin}, jobs.ErrInvalid},
			{"past", jobs.ScheduleRequest{Branch: b, At: now.Add(-time.Hour), Caller: releaseAdmin}, jobs.ErrInvalid},
			{"too far", jobs.ScheduleRequest{Branch: b, At: now.Add(jobs.MaxScheduleAhead + time.Hour), Caller: releaseAdmin}, jobs.ErrInvalid},
			{"default branch", jobs.ScheduleRequest{Branch: "4", At: now.Add(time.Hour), Caller: releaseAdmin}, jobs.ErrInvalid},
			{"unknown branch", jobs.ScheduleRequest{Branch: "987654", At: now.Add(time.Hour), Caller: releaseAdmin}, jobs.ErrNotFound},
			{"policy", jobs.ScheduleRequest{Branch: b, At: now.Add(time.Hour), Conflicts: "mine", Caller: releaseAdmin}, jobs.ErrInvalid},
			{"comment", jobs.ScheduleRequest{Branch: b, At: now.Add(time.Hour), Comment: strings.Repeat("x", 1025), Caller: releaseAdmin}, jobs.ErrTooLarge},
			{"child grant only", jobs.ScheduleRequest{Branch: b, At: now.Add(time.Hour), Caller: &auth.Principal{Name: "ed", Write: []int64{branch}}}, content.ErrForbidden},
			{"no caller", jobs.ScheduleRequest{Branch: b, At: now.Add(time.Hour)}, content.ErrForbidden},
		} {
			if _, err := e.svc.ScheduleRelease(bg, c.r); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		// A conflict: the parent changed an object the release changed.
		_, base, err := e.content.CreateObjects(bg, "4", content.Change{Caller: releaseAdmin}, []content.ObjectInput{{TypeID: content.RootID}})
		if err != nil {
			t.Fatal(err)
		}
		name := func(s string) []content.ValueInput {
			return []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: json.RawMessage(strconv.Quote(s))}}
		}
		for _, w := range []struct{ branch, value string }{{b, "release"}, {"4", "hotfix"}} {
			if _, err := e.content.UpdateObjects(bg, w.branch, content.Change{Caller: releaseAdmin}, []content.ObjectInput{{ID: base[0], Values: name(w.value)}}); err != nil {
				t.Fatal(err)
			}
		}
		j, err := e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: b, At: time.Now(), Caller: releaseAdmin})
		if err != nil {
			t.Fatal(err)
		}
		done := e.waitDone(t, j.ID)
		if done.State != jobs.StateError || !strings.Contains(done.StateMessage, "conflict") || e.onParent(t, ids) != 0 {
			t.Fatalf("conflicting release: state %d %q, %d objects live", done.State, done.StateMessage, e.onParent(t, ids))
		}
		if log := e.log(t, done); !strings.Contains(log, "refused, nothing went live: 1 of 4 objects conflict") {
			t.Errorf("log of the refused release:\n%s", log)
		}
		// The same release with child-wins goes live (the failed job is no
		// scheduled one any more).
		j, err = e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: b, At: time.Now(), Conflicts: content.ConflictsChildWins, Caller: releaseAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if done := e.waitDone(t, j.ID); done.State != jobs.StateSucceeded || e.onParent(t, ids) != len(ids) {
			t.Fatalf("child-wins release: state %d %q", done.State, done.StateMessage)
		}
	})
}

// TestReleaseTakenOverIsNotPromotedTwice: a runner that committed the
// release's promote and was lost before it stored the job's end leaves the
// promote's transaction in the job's checkpoint (written in that
// transaction); the runner taking the job over finds it there and does
// not promote again.
func TestReleaseTakenOverIsNotPromotedTwice(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		branch, ids := e.release(t, "winter", 10)
		committed := make(chan int64, 1)
		hang := map[string]jobs.KindFunc{jobs.KindPromoteRelease: func(ctx context.Context, task *jobs.Task) error {
			res, err := e.content.PromoteBranch(ctx, strconv.FormatInt(branch, 10), content.Change{Caller: releaseAdmin,
				InTx: func(ctx context.Context, tx store.Tx) error {
					return task.Checkpointed(jobs.Checkpoint{Transaction: tx.ID()})(ctx, tx)
				}}, content.PromoteInput{})
			if err != nil {
				return err
			}
			committed <- res.Transaction.ID
			<-ctx.Done() // lost before it could say so
			return ctx.Err()
		}}
		stop := e.runner(t, "doomed", hang)
		j, err := e.svc.ScheduleRelease(bg, jobs.ScheduleRequest{Branch: strconv.FormatInt(branch, 10), At: time.Now(), Caller: releaseAdmin})
		if err != nil {
			t.Fatal(err)
		}
		var tx int64
		select {
		case tx = <-committed:
		case <-time.After(30 * time.Second):
			t.Fatal("the first runner never promoted")
		}
		stop()
		// Something changes on the release after its promote: a second
		// promote would move it.
		if _, err := e.content.UpdateObjects(bg, strconv.FormatInt(branch, 10), content.Change{Caller: releaseAdmin},
			[]content.ObjectInput{{ID: ids[0], Values: []content.ValueInput{{Attribute: content.AttrName, Language: content.LanguageEnUS, JSON: json.RawMessage(`"later"`)}}}}); err != nil {
			t.Fatal(err)
		}
		e.runner(t, "heir", nil)
		done := e.waitDone(t, j.ID)
		if done.State != jobs.StateSucceeded || done.Restarts != 1 || done.Checkpoint == nil || done.Checkpoint.Transaction != tx {
			t.Fatalf("taken over: state %d %q restarts %d checkpoint %+v (promote %d)", done.State, done.StateMessage, done.Restarts, done.Checkpoint, tx)
		}
		if log := e.log(t, done); !strings.Contains(log, fmt.Sprintf("went live in transaction %d before the job was taken over: not promoted again", tx)) {
			t.Errorf("log of the taken-over release:\n%s", log)
		}
		diff, err := e.content.BranchDiff(bg, strconv.FormatInt(branch, 10), content.DiffQuery{Caller: releaseAdmin})
		if err != nil || len(diff.Objects) != 1 || diff.Objects[0].Object != ids[0] {
			t.Fatalf("the release after the takeover holds %+v (%v), want the later change only", diff.Objects, err)
		}
	})
}
