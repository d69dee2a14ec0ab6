package jobs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// Limits bound what one request may ask of the job API. Zero fields get
// the defaults (DefaultLimits).
type Limits struct {
	// MaxObjects caps objIds and scopeIds of a CreateJobRequest (10,000).
	MaxObjects int
	// MaxParameters caps the parameters of a job (100), MaxValues the
	// values of one parameter (1,000) and MaxValueBytes one value (4 KiB).
	MaxParameters, MaxValues, MaxValueBytes int
	// MaxInputBytes caps one job input file across its chunks (1 GiB).
	MaxInputBytes int64
	// MaxLogBytes caps the log kept per job (4 MiB); later lines are
	// dropped behind a truncation note.
	MaxLogBytes int
	// MaxMetrics caps the metric samples kept per job (1,000; the oldest
	// half is thinned out beyond it).
	MaxMetrics int
}

// DefaultLimits are the limits of a zero Limits.
var DefaultLimits = Limits{MaxObjects: 10000, MaxParameters: 100, MaxValues: 1000, MaxValueBytes: 4096,
	MaxInputBytes: 1 << 30, MaxLogBytes: 4 << 20, MaxMetrics: 1000}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *int }{{&l.MaxObjects, &d.MaxObjects}, {&l.MaxParameters, &d.MaxParameters},
		{&l.MaxValues, &d.MaxValues}, {&l.MaxValueBytes, &d.MaxValueBytes}, {&l.MaxLogBytes, &d.MaxLogBytes},
		{&l.MaxMetrics, &d.MaxMetrics}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if l.MaxInputBytes <= 0 {
		l.MaxInputBytes = d.MaxInputBytes
	}
	return l
}

// Service is the job domain: it creates, lists and changes jobs and
// serves their logs, artifacts and inputs. A Runner executes them.
type Service struct {
	st      store.Store
	blobs   blobs.Store
	content *content.Service
	notify  func()
	log     *slog.Logger
	lim     Limits
}

// Options configure a Service.
type Options struct {
	// Notify is called after a commit that queued a job (the outbox
	// relay's Notify); nil waits for the relay's next poll.
	Notify func()
	Limits Limits
	Logger *slog.Logger
}

// New returns the job domain over the store, the blob store and the
// content domain (definitions, exports and imports go through it).
func New(st store.Store, bl blobs.Store, c *content.Service, opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Notify == nil {
		opts.Notify = func() {}
	}
	return &Service{st: st, blobs: bl, content: c, notify: opts.Notify, log: opts.Logger, lim: opts.Limits.withDefaults()}
}

// Limits returns the limits in force.
func (s *Service) Limits() Limits { return s.lim }

// CreateRequest is a CreateJobRequest.
type CreateRequest struct {
	Branch     int64
	Definition int64
	Scope      []int64
	Objects    []int64
	Parameters []Parameter
	Input      *InputFile
	Language   int64
	// Caller is who starts the job, the same principal queries take: its
	// User() (the principal, or the user it acts for) becomes Job.User and
	// names the transaction; the job's writes run as that user. Nil is a
	// job without a user.
	Caller *auth.Principal
	// StartAfter delays the start (a scheduled release); nil = at once.
	StartAfter *time.Time
}

// user is the name the job is started under ("" without a caller).
func (r CreateRequest) user() string {
	if r.Caller == nil {
		return ""
	}
	return r.Caller.User()
}

// Create stores a job in state New and queues it, both in one
// transaction. An unknown branch or definition is ErrNotFound.
func (s *Service) Create(ctx context.Context, r CreateRequest) (Job, error) {
	return s.create(ctx, r, nil)
}

// create is Create with inTx run in the job's transaction before the
// insert (a check that must see every committed job).
func (s *Service) create(ctx context.Context, r CreateRequest, inTx func(store.Tx) error) (Job, error) {
	if err := s.checkCreate(r); err != nil {
		return Job{}, err
	}
	if _, err := s.content.GetBranch(ctx, strconv.FormatInt(r.Branch, 10), content.ReadOptions{}); err != nil {
		return Job{}, err
	}
	def, err := s.Definition(ctx, r.Branch, r.Definition)
	if err != nil {
		return Job{}, err
	}
	if r.Input != nil {
		if err := s.checkInputToken(ctx, r.Input.Token); err != nil {
			return Job{}, err
		}
	}
	culture, err := s.culture(ctx, r.Branch, r.Language)
	if err != nil {
		return Job{}, err
	}
	params := mergeParameters(def.Defaults, r.Parameters)
	if def.Kind == KindPromoteRelease {
		if err := s.checkRelease(ctx, r.Branch, r.Caller, params); err != nil {
			return Job{}, err
		}
	}
	j := Job{GUID: newGUID(), Branch: r.Branch, Definition: r.Definition, User: r.user(), State: StateNew,
		Scope: r.Scope, Objects: r.Objects, Parameters: params,
		Input: r.Input, Language: r.Language, UICulture: culture, Queued: 1, StartAfter: r.StartAfter}
	if r.Caller != nil {
		j.CallerID, j.CallerAdmin = r.Caller.UserID, r.Caller.Admin
	}
	err = s.write(ctx, store.TxMeta{User: r.user(), Comment: "create job", Branch: r.Branch}, func(tx store.Tx) error {
		if inTx != nil {
			if err := inTx(tx); err != nil {
				return err
			}
		}
		row, err := tx.InsertJob(ctx, toRow(j))
		if err != nil {
			return err
		}
		j.ID, j.Created, j.Modified = row.ID, row.Created, row.Modified
		return enqueue(ctx, tx, j)
	})
	if err != nil {
		return Job{}, err
	}
	s.notify()
	return j, nil
}

// culture returns the ISO code (e.g. "en-US") of language, the job's
// CmsJob.uiCulture; 0 (no language) has none. An id that is no language
// object is ErrInvalid.
func (s *Service) culture(ctx context.Context, branch, language int64) (string, error) {
	if language == 0 {
		return "", nil
	}
	o, err := s.content.GetObject(ctx, strconv.FormatInt(branch, 10), strconv.FormatInt(language, 10), content.ReadOptions{Inherited: true})
	if errors.Is(err, content.ErrNotFound) || (err == nil && (o.TypeID != content.TypeLanguage || o.Deleted)) {
		return "", invalidf("language %d is no language", language)
	}
	if err != nil {
		return "", err
	}
	for _, v := range o.Values {
		var code string
		if v.Attribute == content.AttrIsoLanguageCode && json.Unmarshal(v.JSON, &code) == nil {
			return code, nil
		}
	}
	return "", nil
}

func (s *Service) checkCreate(r CreateRequest) error {
	if r.Branch <= 0 {
		return invalidf("branchId %d is not a branch id", r.Branch)
	}
	if r.Definition <= 0 {
		return invalidf("jobDefinitionId %d is not an object id", r.Definition)
	}
	if r.Language < 0 {
		return invalidf("language %d is no language id", r.Language)
	}
	if len(r.Objects) > s.lim.MaxObjects || len(r.Scope) > s.lim.MaxObjects {
		return fmt.Errorf("%w: objIds and scopeIds take at most %d ids each", ErrTooLarge, s.lim.MaxObjects)
	}
	for _, ids := range [][]int64{r.Objects, r.Scope} {
		for _, id := range ids {
			if id <= 0 {
				return invalidf("object id %d is not an object id", id)
			}
		}
	}
	if len(r.Parameters) > s.lim.MaxParameters {
		return fmt.Errorf("%w: a job takes at most %d parameters", ErrTooLarge, s.lim.MaxParameters)
	}
	for _, p := range r.Parameters {
		if strings.TrimSpace(p.Name) == "" || len(p.Name) > 256 {
			return invalidf("a parameter needs a name of 1 to 256 bytes")
		}
		if len(p.Values) > s.lim.MaxValues {
			return fmt.Errorf("%w: parameter %q takes at most %d values", ErrTooLarge, p.Name, s.lim.MaxValues)
		}
		for _, v := range p.Values {
			if len(v) > s.lim.MaxValueBytes {
				return fmt.Errorf("%w: a value of parameter %q is longer than %d bytes", ErrTooLarge, p.Name, s.lim.MaxValueBytes)
			}
		}
	}
	if r.Input != nil && r.Input.Token == "" {
		return invalidf("inputFile needs the token of a job input")
	}
	return nil
}

// mergeParameters returns the definition's defaults overridden by the
// job's own parameters of the same name.
func mergeParameters(defaults, own []Parameter) []Parameter {
	out := append([]Parameter(nil), own...)
	for _, d := range defaults {
		found := false
		for _, p := range own {
			found = found || p.Name == d.Name
		}
		if !found {
			out = append(out, d)
		}
	}
	return out
}

// Get returns one job (deleted ones too) or ErrNotFound.
func (s *Service) Get(ctx context.Context, id int64) (Job, error) {
	row, err := s.st.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Job{}, notFoundf("job %d", id)
	}
	if err != nil {
		return Job{}, err
	}
	return fromRow(row)
}

// Query selects jobs, newest first (GET /jobs).
type Query struct {
	Branch, Definition, Trigger *int64
	State                       *int
	User                        string
	Deleted                     *bool
	Take                        int // 1..content.MaxTake
	Continue                    string
	// Caller, when set, is who lists: only jobs of branches it may read are
	// returned (a Branch filter naming another branch finds none). Nil is
	// a trusted internal read of every branch.
	Caller *auth.Principal
}

// Page is one page of jobs; Continue is "" on the last page.
type Page struct {
	Jobs     []Job
	Continue string
}

func (q Query) scope() string {
	f := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	st, del := "-", "-"
	if q.State != nil {
		st = strconv.Itoa(*q.State)
	}
	if q.Deleted != nil {
		del = strconv.FormatBool(*q.Deleted)
	}
	return strings.Join([]string{"jobs", f(q.Branch), f(q.Definition), f(q.Trigger), st, strings.ToLower(q.User), del}, "/")
}

// List pages through jobs, newest first, by keyset on the id.
func (s *Service) List(ctx context.Context, q Query) (Page, error) {
	before, err := content.ParseContinueToken(q.Continue, q.scope())
	if err != nil {
		return Page{}, err
	}
	if q.Continue != "" && before <= 1 {
		return Page{Jobs: []Job{}}, nil
	}
	visible, err := s.content.ReadableBranches(ctx, q.Caller)
	if err != nil {
		return Page{}, err
	}
	var rows []store.Job
	for {
		batch, err := s.st.ListJobs(ctx, store.JobQuery{Branch: q.Branch, Definition: q.Definition, Trigger: q.Trigger,
			State: q.State, User: strings.TrimSpace(q.User), Deleted: q.Deleted, BeforeID: before, Limit: q.Take + 1})
		if err != nil {
			return Page{}, err
		}
		for _, r := range batch {
			if visible == nil || visible(r.Branch) {
				rows = append(rows, r)
			}
		}
		if len(batch) < q.Take+1 || len(rows) > q.Take {
			break
		}
		before = batch[len(batch)-1].ID
	}
	page := Page{Jobs: make([]Job, 0, min(len(rows), q.Take))}
	for i, r := range rows {
		if i == q.Take {
			page.Continue = content.ContinueToken(rows[i-1].ID, q.scope())
			break
		}
		j, err := fromRow(r)
		if err != nil {
			return Page{}, err
		}
		page.Jobs = append(page.Jobs, j)
	}
	return page, nil
}

// Update applies a PATCH: state is the write-side JobState (0 kill,
// 1 restart; the read-side 4 and 5 are taken for the same), retainUntil
// sets the retention. A transition the job's state does not allow is
// ErrInvalid naming it.
func (s *Service) Update(ctx context.Context, id int64, user string, state *int, retainUntil *time.Time) error {
	restarted := false
	err := s.change(ctx, id, user, "update job", func(j *Job) error {
		if retainUntil != nil {
			t := retainUntil.UTC()
			j.RetainUntil = &t
		}
		if state == nil {
			return nil
		}
		switch *state {
		case RequestKill, StateKillRequest:
			return kill(j, "killed by "+orUnknown(user))
		case RequestRestart, StateRestartRequest:
			if !j.Terminal() {
				return invalidf("job %d is %s: only a succeeded or failed job can be restarted", j.ID, StateName(j.State))
			}
			if j.Removed != nil {
				return invalidf("job %d was removed after its retainUntil: it cannot be restarted", j.ID)
			}
			restart(j)
			restarted = true
			return nil
		default:
			return invalidf("state %d is no JobState (0 KillRequest, 1 RestartRequest)", *state)
		}
	}, func(ctx context.Context, tx store.Tx, j Job) error {
		if !restarted {
			return nil
		}
		if j.Definition == DefinitionPromoteRelease && j.StartAfter != nil {
			// A restarted release waits for its time again: one per branch.
			if err := noOtherRelease(ctx, tx, j.Branch, j.ID); err != nil {
				return err
			}
		}
		return enqueue(ctx, tx, j)
	})
	if err == nil && restarted {
		s.notify()
	}
	return err
}

// kill ends a job that has not started and asks the runner to stop a
// running one.
func kill(j *Job, why string) error {
	switch j.State {
	case StateNew:
		j.State, j.StateMessage = StateError, why+" before it started"
		now := time.Now().UTC()
		j.Finished = &now
	case StateRunning:
		j.State, j.StateMessage = StateKillRequest, why
	case StateKillRequest:
	default:
		return invalidf("job %d is %s: a finished job cannot be killed", j.ID, StateName(j.State))
	}
	return nil
}

func restart(j *Job) {
	j.State, j.Restarts, j.Queued = StateNew, j.Restarts+1, j.Queued+1
	j.Started, j.Finished, j.Progress, j.ProgressInfo, j.StateMessage, j.InstanceID = nil, nil, nil, "", "", ""
	j.Metrics, j.Artifacts, j.Checkpoint = nil, nil, nil
}

// Delete marks a job deleted; a job not finished yet is killed too.
func (s *Service) Delete(ctx context.Context, id int64, user string) error {
	return s.change(ctx, id, user, "delete job", func(j *Job) error {
		j.Deleted = true
		if !j.Terminal() {
			return kill(j, "deleted by "+orUnknown(user))
		}
		return nil
	}, nil)
}

func orUnknown(user string) string {
	if user == "" {
		return "an unknown user"
	}
	return user
}

// change reads job id in a write transaction, applies fn and stores the
// result; after runs in the same transaction.
func (s *Service) change(ctx context.Context, id int64, user, comment string, fn func(*Job) error,
	after func(context.Context, store.Tx, Job) error) error {
	return s.write(ctx, store.TxMeta{User: user, Comment: comment}, func(tx store.Tx) error {
		j, err := changeInTx(ctx, tx, id, fn)
		if err != nil {
			return err
		}
		if after != nil {
			return after(ctx, tx, j)
		}
		return nil
	})
}

// changeInTx reads job id in tx, applies fn and stores the result.
func changeInTx(ctx context.Context, tx store.Tx, id int64, fn func(*Job) error) (Job, error) {
	row, err := tx.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Job{}, notFoundf("job %d", id)
	}
	if err != nil {
		return Job{}, err
	}
	j, err := fromRow(row)
	if err != nil {
		return Job{}, err
	}
	if err := fn(&j); err != nil {
		return Job{}, err
	}
	return j, tx.UpdateJob(ctx, toRow(j))
}

// write runs fn in one write transaction and commits it.
func (s *Service) write(ctx context.Context, meta store.TxMeta, fn func(store.Tx) error) error {
	tx, err := s.st.Begin(ctx, meta)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// StateName names a JobStatus for messages.
func StateName(state int) string {
	names := []string{"New", "Running", "Succeeded", "Error", "KillRequest", "RestartRequest"}
	if state >= 0 && state < len(names) {
		return names[state]
	}
	return strconv.Itoa(state)
}

func toRow(j Job) store.Job {
	d := doc{GUID: j.GUID, Scope: j.Scope, Objects: j.Objects, Parameters: j.Parameters, Input: j.Input,
		Language: j.Language, UICulture: j.UICulture, Started: j.Started, Finished: j.Finished, RetainUntil: j.RetainUntil,
		StateMessage: j.StateMessage, Restarts: j.Restarts, InstanceID: j.InstanceID, Artifacts: j.Artifacts,
		Progress: j.Progress, ProgressInfo: j.ProgressInfo, Metrics: j.Metrics, Queued: j.Queued, Checkpoint: j.Checkpoint, Removed: j.Removed,
		StartAfter: j.StartAfter, CallerID: j.CallerID, CallerAdmin: j.CallerAdmin, FirstDeliv: j.FirstDelivery}
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // plain data only
	}
	return store.Job{ID: j.ID, Branch: j.Branch, Definition: j.Definition, Trigger: j.Trigger, User: j.User,
		State: j.State, Deleted: j.Deleted, Doc: b}
}

func fromRow(r store.Job) (Job, error) {
	var d doc
	if err := json.Unmarshal(r.Doc, &d); err != nil {
		return Job{}, fmt.Errorf("jobs: job %d: stored document: %w", r.ID, err)
	}
	return Job{ID: r.ID, GUID: d.GUID, Branch: r.Branch, Definition: r.Definition, Trigger: r.Trigger, User: r.User,
		State: r.State, Deleted: r.Deleted, Created: r.Created, Modified: r.Modified,
		Scope: d.Scope, Objects: d.Objects, Parameters: d.Parameters, Input: d.Input, Language: d.Language, UICulture: d.UICulture,
		Started: d.Started, Finished: d.Finished, RetainUntil: d.RetainUntil, StateMessage: d.StateMessage,
		Restarts: d.Restarts, InstanceID: d.InstanceID, Artifacts: d.Artifacts, Progress: d.Progress,
		ProgressInfo: d.ProgressInfo, Metrics: d.Metrics, Queued: d.Queued, Checkpoint: d.Checkpoint, Removed: d.Removed,
		StartAfter: d.StartAfter, CallerID: d.CallerID, CallerAdmin: d.CallerAdmin, FirstDelivery: d.FirstDeliv}, nil
}

func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
