package content

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// Comments belong to a branch and an object visible on it. Every write is
// one store transaction (branch in its record) that appends a comment event
// to the outbox on the branch's change subject, so the indexer picks
// comments up like objects. Deletion is soft: a deleted comment can still be
// read and listed (isDeleted) but not updated or deleted again (404).
// Deleting a branch removes its comments with it (store.PurgeBranch); the
// branchDeleted event of that transaction covers them.

// Comment is a comment as the domain returns it.
type Comment struct {
	ID       int64
	Branch   int64
	ObjectID int64
	User     string // "" = unknown
	Body     string
	Deleted  bool
	Created  time.Time
	Modified time.Time
	// LastTransaction is the transaction that last changed the comment.
	LastTransaction int64
}

// CommentQuery selects a page of comments, id descending. Nil pointers and
// "" do not filter.
type CommentQuery struct {
	Branch   *int64
	ObjectID *int64
	// User: only comments by this user (compared without case).
	User    string
	Deleted *bool
	// Take: 0 = DefaultTake; 1..MaxTake, anything else is ErrInvalid.
	Take int
	// Continue is the token of the previous page ("" = first page).
	Continue string
	// Caller, when set, is who lists: only comments on branches it may read
	// are returned (auth.Principal.CanRead; a Branch filter naming another
	// branch finds none). Pages are then filled by reading further, so a
	// page holds up to Take visible comments and the token stays a plain
	// keyset position. Nil is a trusted internal read of every branch.
	Caller *auth.Principal
}

// CommentPage is one page of comments. Continue is "" on the last page.
type CommentPage struct {
	Comments []Comment
	Continue string
}

// Actor is who changes a comment. Only the author or an admin may update
// or delete one (inferred: NovaDB declares 403 without saying when).
type Actor struct {
	// Caller is who acts (nil: nobody, who may change no comment); its
	// User() is recorded as the author, its Admin may change any comment.
	Caller *auth.Principal
	// IfMatch, when set, makes an update or delete conditional on the
	// comment's current state (precondition.go).
	IfMatch *Precondition[Comment]
}

// user is the acting user name ("" without a caller).
func (a Actor) user() string {
	if a.Caller == nil {
		return ""
	}
	return a.Caller.User()
}

// CreateComment validates body and adds a comment by actor to object on
// branch. An unknown branch, or an object that is not visible (or deleted)
// on it, is ErrNotFound.
func (s *Service) CreateComment(ctx context.Context, actor Actor, branch, object int64, body string) (Comment, error) {
	if err := ValidateCommentBody(body); err != nil {
		return Comment{}, err
	}
	if branch <= 0 {
		return Comment{}, notFoundf("branch %d", branch)
	}
	if object <= 0 {
		return Comment{}, notFoundf("object %d on branch %d", object, branch)
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: actor.user(), Branch: branch})
	if err != nil {
		return Comment{}, err
	}
	defer func() { _ = tx.Rollback() }()
	branches, err := loadBranches(ctx, tx)
	if err != nil {
		return Comment{}, err
	}
	if _, ok := branches[branch]; !ok {
		return Comment{}, notFoundf("branch %d", branch)
	}
	v, err := newView(tx, branches, branch)
	if err != nil {
		return Comment{}, err
	}
	objs, err := v.objects(ctx, []int64{object})
	if err != nil {
		return Comment{}, err
	}
	if o, ok := objs[object]; !ok || o.Deleted {
		return Comment{}, notFoundf("object %d on branch %d", object, branch)
	}
	c, err := tx.InsertComment(ctx, store.Comment{Branch: branch, ObjectID: object, User: actor.user(), Body: body})
	if err != nil {
		return Comment{}, err
	}
	if err := commitComment(ctx, tx, c, changes.CommentCreated); err != nil {
		return Comment{}, err
	}
	return toComment(c), nil
}

// GetComment reads one comment, deleted or not; an unknown id is
// ErrNotFound.
func (s *Service) GetComment(ctx context.Context, id int64) (Comment, error) {
	c, err := s.st.GetComment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Comment{}, notFoundf("comment %d", id)
	}
	if err != nil {
		return Comment{}, err
	}
	return toComment(c), nil
}

// GetComments pages through comments, newest (highest id) first. A Branch
// filter naming no branch finds none, as one naming a branch the caller
// may not read (the answer does not tell which branches exist). Paging is keyset paging by id,
// so a token stays valid across writes; comments created after the first
// page have higher ids and are not returned by later pages.
func (s *Service) GetComments(ctx context.Context, q CommentQuery) (CommentPage, error) {
	take, err := commentTake(q.Take)
	if err != nil {
		return CommentPage{}, err
	}
	before, err := decodeToken(q.Continue, commentScope(q))
	if err != nil {
		return CommentPage{}, err
	}
	visible, err := s.readableBranches(ctx, q.Caller)
	if err != nil {
		return CommentPage{}, err
	}
	if before == 0 && q.Continue != "" {
		return CommentPage{Comments: []Comment{}}, nil // continued past the oldest id
	}
	var rows []store.Comment
	for {
		batch, err := s.st.ListComments(ctx, store.CommentQuery{
			Branch: q.Branch, ObjectID: q.ObjectID, User: strings.TrimSpace(q.User), Deleted: q.Deleted,
			BeforeID: before, Limit: take + 1,
		})
		if err != nil {
			return CommentPage{}, err
		}
		for _, r := range batch {
			if visible == nil || visible(r.Branch) {
				rows = append(rows, r)
			}
		}
		if len(batch) < take+1 || len(rows) > take {
			break
		}
		before = batch[len(batch)-1].ID
	}
	page := CommentPage{Comments: make([]Comment, 0, min(len(rows), take))}
	for i, r := range rows {
		if i == take {
			page.Continue = encodeToken(rows[i-1].ID, commentScope(q))
			break
		}
		page.Comments = append(page.Comments, toComment(r))
	}
	return page, nil
}

// UpdateComment replaces the body of a live comment. An unknown or deleted
// comment is ErrNotFound; an actor who is neither the author nor an admin
// gets ErrForbidden.
func (s *Service) UpdateComment(ctx context.Context, actor Actor, id int64, body string) error {
	if err := ValidateCommentBody(body); err != nil {
		return err
	}
	return s.changeComment(ctx, actor, id, changes.CommentUpdated, func(tx store.Tx) error {
		return tx.UpdateCommentBody(ctx, id, body)
	})
}

// DeleteComment soft-deletes a live comment. An unknown or already deleted
// comment is ErrNotFound (inferred, like update); an actor who is neither
// the author nor an admin gets ErrForbidden.
func (s *Service) DeleteComment(ctx context.Context, actor Actor, id int64) error {
	return s.changeComment(ctx, actor, id, changes.CommentDeleted, func(tx store.Tx) error {
		_, err := tx.DeleteComment(ctx, id)
		return err
	})
}

// changeComment runs write on a live comment in one transaction with its
// outbox event. The transaction is opened first and the comment read inside
// it, so a concurrent delete cannot slip in between check and write.
func (s *Service) changeComment(ctx context.Context, actor Actor, id int64, action string, write func(store.Tx) error) error {
	pre, err := s.st.GetComment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFoundf("comment %d", id)
	}
	if err != nil {
		return err
	}
	tx, err := s.st.Begin(ctx, store.TxMeta{User: actor.user(), Branch: pre.Branch})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	c, err := tx.GetComment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFoundf("comment %d", id)
	}
	if err != nil {
		return err
	}
	if c.Deleted {
		return notFoundf("comment %d is deleted", id)
	}
	if !(actor.Caller != nil && actor.Caller.Admin) && (actor.user() == "" || store.CommentUserKey(actor.user()) != store.CommentUserKey(c.User)) {
		return fmt.Errorf("%w: only the author or an administrator may change comment %d", ErrForbidden, id)
	}
	if err := actor.IfMatch.check(toComment(c), c.Deleted, fmt.Sprintf("comment %d", id)); err != nil {
		return err
	}
	if err := write(tx); err != nil {
		return err
	}
	return commitComment(ctx, tx, c, action)
}

// commitComment appends the comment's outbox event and commits.
func commitComment(ctx context.Context, tx store.Tx, c store.Comment, action string) error {
	err := appendEvent(ctx, tx, changes.Event{
		Branch: c.Branch, Transaction: tx.ID(), ObjectIDs: []int64{c.ObjectID},
		Kind: changes.KindComment, CommentID: c.ID, Action: action,
	})
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// commentTake reads take like every list (takeOf).
func commentTake(take int) (int, error) { return takeOf(take) }

// commentScope binds continuation tokens to the filters of the list.
func commentScope(q CommentQuery) string {
	opt := func(p *int64) string {
		if p == nil {
			return "*"
		}
		return fmt.Sprint(*p)
	}
	d := "*"
	if q.Deleted != nil {
		d = fmt.Sprint(*q.Deleted)
	}
	return fmt.Sprintf("comments/%s/%s/%s/%q", opt(q.Branch), opt(q.ObjectID), d, store.CommentUserKey(strings.TrimSpace(q.User)))
}

func toComment(c store.Comment) Comment {
	return Comment{
		ID: c.ID, Branch: c.Branch, ObjectID: c.ObjectID, User: c.User, Body: c.Body, Deleted: c.Deleted,
		Created: c.Created, Modified: c.Modified, LastTransaction: c.ModifiedTx,
	}
}
