package store

import (
	"context"
	"fmt"
	"time"
)

// Jobs are rows of their own, like comments: int32-range ids from a
// separate counter, one branch, a job definition id and a state the
// listing filters on. Everything else a job carries (its request, times,
// progress, metrics) is the caller's JSON document in Doc: the store only
// keeps it. Writing a job in the same transaction as an outbox event is
// how the job queue stays consistent with the table (pkg/jobs).

// JobReader is the read side of jobs, part of Reader.
type JobReader interface {
	// GetJob returns one job, deleted or not, or ErrNotFound.
	GetJob(ctx context.Context, id int64) (Job, error)

	// ListJobs returns the jobs matching q in descending id order (newest
	// first), in a single query.
	ListJobs(ctx context.Context, q JobQuery) ([]Job, error)
}

// JobWriter is the write side of jobs, part of Tx.
type JobWriter interface {
	// InsertJob stores a new job and returns it as stored: ID is allocated
	// (increasing), Created and Modified are the transaction time. A
	// negative Branch or a non-positive Definition is ErrInvalidArgument.
	InsertJob(ctx context.Context, j Job) (Job, error)

	// UpdateJob replaces the mutable fields of job j.ID (State, Deleted,
	// Doc) and sets Modified. An unknown id is ErrNotFound.
	UpdateJob(ctx context.Context, j Job) error
}

// Job is one job row.
type Job struct {
	ID         int64 // set by the store
	Branch     int64
	Definition int64
	// Trigger is the trigger object that started the job; 0 = none.
	Trigger int64
	// User started the job ("" = unknown).
	User    string
	State   int
	Deleted bool
	// Doc is the rest of the job as JSON, owned by the caller.
	Doc      []byte
	Created  time.Time // set by the store: UTC, microseconds
	Modified time.Time // set by the store: UTC, microseconds
}

// JobQuery selects jobs, newest first. Nil pointers and "" do not filter.
type JobQuery struct {
	Branch     *int64
	Definition *int64
	Trigger    *int64
	State      *int
	// User matches the creator without regard to case (CommentUserKey).
	User    string
	Deleted *bool
	// BeforeID starts below this id (keyset paging); 0 starts at the newest.
	BeforeID int64
	// Limit caps the result; <= 0 means no limit.
	Limit int
}

// CheckJob returns ErrInvalidArgument for a job the store cannot store.
func CheckJob(j Job) error {
	if j.Definition <= 0 {
		return fmt.Errorf("%w: job definition %d must be positive", ErrInvalidArgument, j.Definition)
	}
	if j.Branch < 0 {
		return fmt.Errorf("%w: job branch %d is negative", ErrInvalidArgument, j.Branch)
	}
	return nil
}
