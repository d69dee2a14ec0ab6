package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Comments are rows of their own, not objects: they have int64 ids from a
// separate counter, belong to one branch and point at one object id. The
// store does not check that the branch or object exists (that is the
// caller's business, inside the same transaction).

// CommentReader is the read side of comments, part of Reader.
type CommentReader interface {
	// GetComment returns one comment, deleted or not, or ErrNotFound.
	GetComment(ctx context.Context, id int64) (Comment, error)

	// ListComments returns the comments matching q in descending id order
	// (newest first), in a single query.
	ListComments(ctx context.Context, q CommentQuery) ([]Comment, error)
}

// CommentWriter is the write side of comments, part of Tx.
type CommentWriter interface {
	// InsertComment stores a new comment and returns it as stored: ID is
	// allocated (increasing, never handed out by a committed transaction
	// before), Created and Modified are the transaction time, CreatedTx and
	// ModifiedTx this transaction, Deleted false. The caller's values of
	// those fields are ignored. A non-positive ObjectID or a negative
	// Branch is ErrInvalidArgument.
	InsertComment(ctx context.Context, c Comment) (Comment, error)

	// UpdateCommentBody replaces the body of a comment (deleted or not: the
	// caller decides whether that is allowed) and sets Modified and
	// ModifiedTx. An unknown id is ErrNotFound.
	UpdateCommentBody(ctx context.Context, id int64, body string) error

	// DeleteComment soft-deletes a comment (Deleted = true, Modified and
	// ModifiedTx set) and reports whether it was live before; an already
	// deleted comment is left unchanged (false). An unknown id is
	// ErrNotFound.
	DeleteComment(ctx context.Context, id int64) (bool, error)
}

// Comment is one comment row.
type Comment struct {
	ID       int64 // set by the store
	Branch   int64
	ObjectID int64
	// User is the author ("" = unknown).
	User       string
	Body       string
	Deleted    bool
	Created    time.Time // set by the store: UTC, microseconds
	Modified   time.Time // set by the store: UTC, microseconds
	CreatedTx  int64     // set by the store
	ModifiedTx int64     // set by the store
}

// CommentQuery selects comments, newest first. Nil pointers and "" do not
// filter.
type CommentQuery struct {
	Branch   *int64
	ObjectID *int64
	// User matches the author without regard to case (CommentUserKey).
	User string
	// Deleted: nil = both, else only comments with this flag.
	Deleted *bool
	// BeforeID starts below this id (keyset paging: pass the last id seen);
	// 0 starts at the newest comment.
	BeforeID int64
	// Limit caps the result; <= 0 means no limit.
	Limit int
}

// CommentUserKey is the form in which authors are compared: lower case
// (Unicode simple folding via strings.ToLower, done in Go so that every
// backend compares alike).
func CommentUserKey(user string) string { return strings.ToLower(user) }

// CheckComment returns ErrInvalidArgument for a comment the store cannot
// store.
func CheckComment(c Comment) error {
	if c.ObjectID <= 0 {
		return fmt.Errorf("%w: comment object id %d must be positive", ErrInvalidArgument, c.ObjectID)
	}
	if c.Branch < 0 {
		return fmt.Errorf("%w: comment branch %d is negative", ErrInvalidArgument, c.Branch)
	}
	return nil
}
