// Package jobs runs editors' batch work (exports, imports, re-indexing) as
// jobs: a job definition is an object of type 120 (the built-ins are
// bootstrapped by pkg/content), a job is a row in the store
// (store.JobWriter) whose JSON document this package owns, and a job is
// queued by an outbox event written in the same transaction as the row, so
// the queue and the table never disagree: the outbox relay publishes the
// event to a JetStream work-queue stream (Queue), deduplicated by its
// message id, and a Runner pulls it with explicit acks.
//
// States (NovaDB JobStatus): 0 New → 1 Running → 2 Succeeded or 3 Error.
// 4 KillRequest is a running job asked to stop (the runner ends it as
// Error within its check interval); restart puts a finished job back to 0
// New and queues it again. Logs, progress, metrics and artifacts are kept
// per job: the document holds progress and metrics, the blob store holds
// the log and the artifacts (see Service).
package jobs

import (
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
)

// JobStatus values (CmsJob.state, GET /jobs?state=).
const (
	StateNew            = 0
	StateRunning        = 1
	StateSucceeded      = 2
	StateError          = 3
	StateKillRequest    = 4
	StateRestartRequest = 5
)

// Write-side JobState values (UpdateJobRequest.state).
const (
	RequestKill    = 0
	RequestRestart = 1
)

// Sentinel errors; every client mistake wraps one of them. Not found and
// invalid are the content domain's own (a job's definition and branch are
// content).
var (
	ErrNotFound = content.ErrNotFound
	ErrInvalid  = content.ErrInvalid
	ErrTooLarge = errkind.New(errkind.TooLarge, "too large")
	// ErrInputTooLarge is a job input beyond Limits.MaxInputBytes (422).
	ErrInputTooLarge = errkind.New(errkind.Unprocessable, "the file size is larger than expected")
	ErrUnsupported   = errkind.New(errkind.Unsupported, "not supported yet")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}

// Parameter is a named job parameter with its values.
type Parameter struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// InputFile names an uploaded job input.
type InputFile struct {
	Token string `json:"token"`
	Name  string `json:"name,omitempty"`
}

// Metric is one sample of a running job.
type Metric struct {
	UpTime float64 `json:"upTime"` // seconds since the job started
	Memory float64 `json:"memory"` // MiB
	CPU    float64 `json:"cpu"`    // fraction of one core
}

// Job is a job as the API sees it.
type Job struct {
	ID         int64
	GUID       string
	Branch     int64
	Definition int64
	Trigger    int64 // 0 = none
	User       string
	State      int
	Deleted    bool
	Created    time.Time
	Modified   time.Time

	Scope      []int64
	Objects    []int64
	Parameters []Parameter
	Input      *InputFile
	Language   int64
	// UICulture is the ISO code of Language ("" without one).
	UICulture    string
	Started      *time.Time
	Finished     *time.Time
	RetainUntil  *time.Time
	StateMessage string
	Restarts     int
	InstanceID   string
	Artifacts    []string
	Progress     *float64
	ProgressInfo string
	Metrics      []Metric
	// Queued counts how often the job was queued (1 at creation, +1 per
	// restart); a queue message of an older round is stale.
	Queued int
	// Checkpoint is how far a kind that writes content got, stored in the
	// same transaction as each of its writes (Task.Checkpointed); a runner
	// taking the job over resumes after it. A restart clears it.
	Checkpoint *Checkpoint
	// Removed is when the job's log and artifacts were deleted because its
	// retainUntil had passed (RemoveExpired); nil = kept.
	Removed *time.Time
	// StartAfter is when a scheduled job may start (CmsJob.startAfter, a
	// scheduled release: ScheduleRelease); nil = at once. A runner that
	// receives the job earlier hands it back to the queue until then.
	StartAfter *time.Time
	// CallerID and CallerAdmin are who started the job (the user object
	// id, 0 for the configured administrator, and whether it was an
	// administrator): a release promote runs with that user's grants as
	// they are when it runs.
	CallerID    int64
	CallerAdmin bool
	// FirstDelivery is the queue delivery of this round that first
	// claimed the job; takeovers are counted from it (a scheduled job is
	// delivered, and handed back, before it is due).
	FirstDelivery uint64
}

// Checkpoint counts the input a job has durably processed.
type Checkpoint struct {
	// Consumed input items (e.g. objects of an import file), in order.
	Consumed int `json:"consumed"`
	Created  int `json:"created,omitempty"`
	Updated  int `json:"updated,omitempty"`
	// Transaction is the write a one-transaction kind (a release promote)
	// committed: a runner taking the job over does not write it again.
	Transaction int64 `json:"transaction,omitempty"`
}

// doc is the part of Job kept in the store's JSON document.
type doc struct {
	GUID         string      `json:"guid"`
	Scope        []int64     `json:"scope,omitempty"`
	Objects      []int64     `json:"objects,omitempty"`
	Parameters   []Parameter `json:"parameters,omitempty"`
	Input        *InputFile  `json:"input,omitempty"`
	Language     int64       `json:"language,omitempty"`
	UICulture    string      `json:"uiCulture,omitempty"`
	Started      *time.Time  `json:"started,omitempty"`
	Finished     *time.Time  `json:"finished,omitempty"`
	RetainUntil  *time.Time  `json:"retainUntil,omitempty"`
	StateMessage string      `json:"stateMessage,omitempty"`
	Restarts     int         `json:"restarts,omitempty"`
	InstanceID   string      `json:"instanceId,omitempty"`
	Artifacts    []string    `json:"artifacts,omitempty"`
	Progress     *float64    `json:"progress,omitempty"`
	ProgressInfo string      `json:"progressInfo,omitempty"`
	Metrics      []Metric    `json:"metrics,omitempty"`
	Queued       int         `json:"queued"`
	Checkpoint   *Checkpoint `json:"checkpoint,omitempty"`
	Removed      *time.Time  `json:"removed,omitempty"`
	StartAfter   *time.Time  `json:"startAfter,omitempty"`
	CallerID     int64       `json:"callerId,omitempty"`
	CallerAdmin  bool        `json:"callerAdmin,omitempty"`
	FirstDeliv   uint64      `json:"firstDelivery,omitempty"`
}

// Terminal reports whether the job is finished (Succeeded or Error).
func (j Job) Terminal() bool { return j.State == StateSucceeded || j.State == StateError }

// Param returns the values of the parameter name (nil when absent).
func (j Job) Param(name string) []string {
	for _, p := range j.Parameters {
		if p.Name == name {
			return p.Values
		}
	}
	return nil
}
