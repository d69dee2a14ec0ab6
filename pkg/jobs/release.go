package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/store"
)

// A release is a child branch promoted into its parent at a time: a job
// of the built-in definition jobPromoteRelease (1205) on the branch, with
// StartAfter. The runner that receives it before its time hands it back to
// the queue until then (Runner.handle), so it starts when it is due, once:
// the claim is a store write (every writer is serialised), a runner taking
// it over finds the promote's transaction in its checkpoint, written in
// that same transaction, and never promotes twice.

// Limits of a scheduled release.
const (
	// MaxScheduleAhead is how far ahead a release may be scheduled.
	MaxScheduleAhead = 366 * 24 * time.Hour
	// ScheduleGrace is how far in the past a release's time may be: it
	// then starts at once (a client's clock a little behind the server's).
	ScheduleGrace = time.Minute
	// MaxReleaseCommentBytes caps a release's transaction comment.
	MaxReleaseCommentBytes = 1024
	// MaxScheduledReleases caps the releases waiting for their time in an
	// installation: each holds a queue message unacknowledged, and the
	// runners' consumer delivers at most 10,000 such at once.
	MaxScheduledReleases = 1000
)

// Parameters of a jobPromoteRelease job.
const (
	ParamConflicts = "conflicts" // refuse (default), child-wins or parent-wins
	ParamComment   = "comment"   // the promote's transaction comment
	ParamObjectIDs = "objectIds" // a selection: ids, GUIDs or ApiIdentifiers on the release
)

// ErrReleaseScheduled is a ScheduleRelease of a branch that has a
// scheduled release already (422).
var ErrReleaseScheduled = errkind.New(errkind.Unprocessable, "the branch has a scheduled release")

// ScheduleRequest schedules the promote of a release branch.
type ScheduleRequest struct {
	// Branch is the release (a child branch): ID, GUID or ApiIdentifier.
	Branch string
	// At is when it goes live.
	At time.Time
	// Objects selects objects (empty = everything the branch holds of its
	// own), Conflicts is the policy, Comment the transaction's comment.
	Objects   []string
	Conflicts string
	Comment   string
	Caller    *auth.Principal
}

// ScheduleRelease starts a jobPromoteRelease job on the branch that
// starts at r.At. The caller needs a write grant on the branch and on its
// parent, as for a promote (checked again when it runs). A branch has at
// most one scheduled release: to reschedule, kill the job (PATCH
// /jobs/{id} state 0) and schedule again.
func (s *Service) ScheduleRelease(ctx context.Context, r ScheduleRequest) (Job, error) {
	now := time.Now()
	switch {
	case r.At.IsZero():
		return Job{}, invalidf("a release needs its time (at)")
	case r.At.Before(now.Add(-ScheduleGrace)):
		return Job{}, invalidf("the release time %s has passed", r.At.UTC().Format(time.RFC3339))
	case r.At.After(now.Add(MaxScheduleAhead)):
		return Job{}, invalidf("the release time %s is more than %d days ahead", r.At.UTC().Format(time.RFC3339), MaxScheduleAhead/(24*time.Hour))
	}
	chain, err := s.content.BranchChain(ctx, r.Branch)
	if err != nil {
		return Job{}, err
	}
	var params []Parameter
	if r.Conflicts != "" {
		params = append(params, Parameter{Name: ParamConflicts, Values: []string{r.Conflicts}})
	}
	if r.Comment != "" {
		params = append(params, Parameter{Name: ParamComment, Values: []string{r.Comment}})
	}
	if len(r.Objects) > 0 {
		params = append(params, Parameter{Name: ParamObjectIDs, Values: r.Objects})
	}
	at := r.At.UTC()
	branch := chain[0]
	return s.create(ctx, CreateRequest{Branch: branch, Definition: DefinitionPromoteRelease, Parameters: params,
		Caller: r.Caller, StartAfter: &at}, func(tx store.Tx) error { return noOtherRelease(ctx, tx, branch, 0) })
}

// noOtherRelease is ErrReleaseScheduled when a job other than except
// waits to release branch (read in the write transaction tx: writes are
// serialised, so two schedules cannot both pass).
// At most MaxScheduledReleases wait in the installation.
func noOtherRelease(ctx context.Context, tx store.Tx, branch, except int64) error {
	def, state := DefinitionPromoteRelease, StateNew
	rows, err := tx.ListJobs(ctx, store.JobQuery{Definition: &def, State: &state})
	if err != nil {
		return err
	}
	waiting := 0
	for _, row := range rows {
		j, err := fromRow(row)
		if err != nil || j.StartAfter == nil || j.ID == except {
			continue
		}
		waiting++
		if j.Branch == branch {
			return fmt.Errorf("%w: branch %d goes live at %s (job %d): kill that job to reschedule", ErrReleaseScheduled,
				branch, j.StartAfter.Format(time.RFC3339), j.ID)
		}
	}
	if waiting >= MaxScheduledReleases {
		return fmt.Errorf("%w: %d releases wait for their time already, at most %d", ErrReleaseScheduled, waiting, MaxScheduledReleases)
	}
	return nil
}

// checkRelease checks a jobPromoteRelease job before it is stored: the
// branch is a child branch, the caller may write it and its parent, the
// parameters are a promote's.
func (s *Service) checkRelease(ctx context.Context, branch int64, caller *auth.Principal, params []Parameter) error {
	chain, err := s.content.BranchChain(ctx, strconv.FormatInt(branch, 10))
	if err != nil {
		return err
	}
	if len(chain) < 2 {
		return invalidf("branch %d has no parent: a release is a child branch", branch)
	}
	if caller == nil || !caller.Allowed(auth.AccessWrite, chain) || !caller.Allowed(auth.AccessWrite, chain[1:]) {
		return fmt.Errorf("%w: a release of branch %d needs a write grant on it and on its parent %d", content.ErrForbidden, branch, chain[1])
	}
	_, _, err = releaseInput(Job{Branch: branch, Parameters: params})
	return err
}

// releaseInput reads a release job's parameters.
func releaseInput(j Job) (content.PromoteInput, string, error) {
	in := content.PromoteInput{Objects: slices.Clone(j.Param(ParamObjectIDs))}
	for _, id := range j.Objects {
		in.Objects = append(in.Objects, strconv.FormatInt(id, 10))
	}
	if len(in.Objects) > content.MaxPromoteSelection {
		return in, "", fmt.Errorf("%w: a release selects at most %d objects", ErrTooLarge, content.MaxPromoteSelection)
	}
	switch c := j.Param(ParamConflicts); {
	case len(c) > 1:
		return in, "", invalidf("parameter %s takes one value", ParamConflicts)
	case len(c) == 1:
		in.Conflicts = c[0]
	}
	switch in.Conflicts {
	case "", content.ConflictsRefuse, content.ConflictsChildWins, content.ConflictsParentWins:
	default:
		return in, "", invalidf("parameter %s must be %s, %s or %s", ParamConflicts, content.ConflictsRefuse,
			content.ConflictsChildWins, content.ConflictsParentWins)
	}
	comment := fmt.Sprintf("Release of branch %d", j.Branch)
	switch c := j.Param(ParamComment); {
	case len(c) > 1:
		return in, "", invalidf("parameter %s takes one value", ParamComment)
	case len(c) == 1 && len(c[0]) > MaxReleaseCommentBytes:
		return in, "", fmt.Errorf("%w: parameter %s is longer than %d bytes", ErrTooLarge, ParamComment, MaxReleaseCommentBytes)
	case len(c) == 1 && strings.TrimSpace(c[0]) != "":
		comment = c[0]
	}
	return in, comment, nil
}

// callerOf is the principal a job's writes run as: the user who started
// it with the grants it has now (an administrator without a user object,
// the configured one, stays one; anyone else without a user object has no
// grants).
func (s *Service) callerOf(ctx context.Context, j Job) (auth.Principal, error) {
	if j.CallerID != 0 {
		p, err := s.content.Account(ctx, j.CallerID)
		if errors.Is(err, auth.ErrBadCredentials) {
			return auth.Principal{}, fmt.Errorf("%w: user %s, who started the job, no longer exists", content.ErrForbidden, orUnknown(j.User))
		}
		return p, err
	}
	return auth.Principal{Name: j.User, Admin: j.CallerAdmin}, nil
}

// promoteRelease is the jobPromoteRelease kind: the existing promote of
// the job's branch into its parent, one transaction, whose commit also
// stores the job's checkpoint; the log says what went live or why not.
func promoteRelease(ctx context.Context, t *Task) error {
	j := t.Job
	if cp := j.Checkpoint; cp != nil && cp.Transaction != 0 {
		t.Logf("the release went live in transaction %d before the job was taken over: not promoted again", cp.Transaction)
		return nil
	}
	in, comment, err := releaseInput(j)
	if err != nil {
		return err
	}
	caller, err := t.svc.callerOf(ctx, j)
	if err != nil {
		return err
	}
	if j.StartAfter != nil && j.Started != nil {
		t.Logf("scheduled for %s, started %s after it", j.StartAfter.Format(time.RFC3339Nano),
			j.Started.Sub(*j.StartAfter).Round(time.Millisecond))
	}
	policy := in.Conflicts
	if policy == "" {
		policy = content.ConflictsRefuse
	}
	t.Logf("promoting branch %d into its parent (conflicts: %s)", j.Branch, policy)
	ch := content.Change{Caller: &caller, Comment: comment, InTx: func(ctx context.Context, tx store.Tx) error {
		return t.Checkpointed(Checkpoint{Transaction: tx.ID()})(ctx, tx)
	}}
	res, err := t.svc.content.PromoteBranch(ctx, strconv.FormatInt(j.Branch, 10), ch, in)
	if errors.Is(err, content.ErrPromoteConflicts) {
		ids := make([]string, 0, len(res.Conflicts))
		for _, d := range res.Conflicts {
			ids = append(ids, strconv.FormatInt(d.Object, 10))
		}
		t.Logf("refused, nothing went live: %d of %d objects conflict (changed on the parent since the release changed them), first %s; "+
			"resolve them or schedule again with conflicts child-wins or parent-wins", res.ConflictCount, res.Objects, strings.Join(ids, ", "))
		return err
	}
	if err != nil {
		t.Logf("refused, nothing went live: %v", err)
		return err
	}
	if res.Transaction == nil {
		t.Logf("nothing went live: branch %d holds nothing of its own", j.Branch)
		t.SetProgress(1, "nothing to promote")
		return nil
	}
	tx, committed := *res.Transaction, time.Now().UTC()
	late := ""
	if j.StartAfter != nil {
		late = fmt.Sprintf(", %s after its time", committed.Sub(*j.StartAfter).Round(time.Millisecond))
	}
	t.Logf("went live in transaction %d on branch %d, committed at %s%s: %d objects (%d created, %d deleted, %d updated)",
		tx.ID, res.Parent, committed.Format(time.RFC3339Nano), late, res.Objects, res.Created, res.Deleted, res.Updated)
	if res.ConflictCount > 0 {
		t.Logf("%d conflicting objects resolved by %s", res.ConflictCount, policy)
	}
	t.Logf("per type: %s", t.svc.typeCounts(ctx, res.Parent, res.ByType))
	t.SetProgress(1, fmt.Sprintf("%d objects went live in transaction %d", res.Objects, tx.ID))
	return nil
}

// typeCounts writes counts per type id as "article (5001) 12, 5002 3",
// largest first, the type's ApiIdentifier where it has one.
func (s *Service) typeCounts(ctx context.Context, branch int64, byType map[int64]int) string {
	ids := make([]int64, 0, len(byType))
	idents := make([]string, 0, len(byType))
	for id := range byType {
		ids = append(ids, id)
		idents = append(idents, strconv.FormatInt(id, 10))
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if byType[a] != byType[b] {
			return cmp.Compare(byType[b], byType[a])
		}
		return cmp.Compare(a, b)
	})
	names := map[int64]string{}
	if objs, err := s.content.GetObjects(ctx, strconv.FormatInt(branch, 10), idents, content.ReadOptions{}); err == nil {
		for _, o := range objs {
			names[o.ID] = o.APIIdentifier
		}
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		if n := names[id]; n != "" {
			parts[i] = fmt.Sprintf("%s (%d) %d", n, id, byType[id])
		} else {
			parts[i] = fmt.Sprintf("%d %d", id, byType[id])
		}
	}
	return strings.Join(parts, ", ")
}
