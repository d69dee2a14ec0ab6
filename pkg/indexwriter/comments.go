package indexwriter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Comments.
//
// Comments get an index of their own (indexdoc.CommentsIndex, with
// Options.IndexPrefix), one document per comment keyed indexdoc.CommentDocID(id),
// versioned with the transaction id of the event that built it. A comment
// event (changes.Event, kind changes.KindComment, ObjectIDs = the
// commented object) rebuilds the documents of every comment on that object
// and branch from the store's current state, so the event's commentId is
// not needed and a replayed or out-of-order event is harmless, exactly
// like object documents. Soft-deleted comments stay indexed with
// indexdoc.FieldCommentDeleted = true (readers exclude them); a deleted branch
// (kind branchDeleted) loses its comment documents (tombstones), as the
// store purges its comments.
//
// Freshness: after each comment event the transaction's time (which is the
// comment's `modified`, set by the store) is recorded as the comment
// index's change-tracking timestamp, in indexdoc.CommentStateIndex with the
// transaction id as version (so it never goes back). The Index API's
// minChangeTrackingTimestamp waits for it (WaitForCommentTimestamp).

// CommentsIndex is the name of the comments index (without the engine
// prefix).
func (ix *Indexer) CommentsIndex() string { return ix.opts.IndexPrefix + indexdoc.CommentsIndex }

func (ix *Indexer) commentStateIndex() string {
	return ix.opts.IndexPrefix + indexdoc.CommentStateIndex
}

// EnsureCommentIndexes creates the comments and comment state indexes.
func (ix *Indexer) EnsureCommentIndexes(ctx context.Context) error {
	if err := ix.eng.EnsureIndex(ctx, ix.CommentsIndex(), indexdoc.CommentsMapping()); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.CommentsIndex(), err)
	}
	if err := ix.eng.EnsureIndex(ctx, ix.commentStateIndex(), indexdoc.CommentStateMapping()); err != nil {
		return fmt.Errorf("indexwriter: ensure %s: %w", ix.commentStateIndex(), err)
	}
	return nil
}

// applyComments is Apply's comment part. For a comment event it does all
// the work (done = true): rebuilds the comments of the event's object on
// its branch, refreshes the comments index and records the comment
// timestamp; the caller records the change-tracking version. For a
// branchDeleted event it removes the branch's comment documents and lets
// Apply go on (done = false).
func (ix *Indexer) applyComments(ctx context.Context, t tree, ev changes.Event, res *ApplyResult) (bool, error) {
	switch ev.Kind {
	case changes.KindComment:
	case changes.KindBranchDeleted:
		return false, ix.purgeBranchComments(ctx, ev.Branch, ev.Transaction, res)
	default:
		return false, nil
	}
	if err := ix.EnsureCommentIndexes(ctx); err != nil {
		return true, err
	}
	v := ev.Transaction
	for _, obj := range dedup(ev.ObjectIDs) {
		ops, err := ix.BuildCommentDocuments(ctx, t, ev.Branch, obj, v)
		if err != nil {
			return true, err
		}
		if err := ix.writeComments(ctx, ops, res); err != nil {
			return true, err
		}
	}
	res.Branches++
	if err := ix.eng.Refresh(ctx, ix.CommentsIndex()); err != nil {
		return true, fmt.Errorf("indexwriter: refresh %s: %w", ix.CommentsIndex(), err)
	}
	txs, err := ix.transactions(ctx, []int64{v})
	if err != nil {
		return true, err
	}
	if tx, ok := txs[v]; ok {
		_, err := ix.eng.Bulk(ctx, ix.commentStateIndex(), []search.Op{search.Upsert(search.Document{
			ID: indexdoc.CommentTimestampDocID, Version: v, Fields: map[string]any{indexdoc.FieldCommentMicros: tx.Time.UnixMicro()}})})
		if err != nil {
			return true, fmt.Errorf("indexwriter: record comment timestamp: %w", err)
		}
	}
	ix.log.Debug("applied comment change", "tx", v, "branch", ev.Branch, "objects", ev.ObjectIDs, "ops", res.Ops)
	return true, nil
}

// BuildCommentDocuments returns the ops that bring the documents of every
// comment on object on branch up to date, versioned with version. t may
// be the zero tree: the object type is then read on the branch itself.
func (ix *Indexer) BuildCommentDocuments(ctx context.Context, t tree, branch, object, version int64) ([]search.Op, error) {
	rows, err := ix.st.ListComments(ctx, store.CommentQuery{Branch: &branch, ObjectID: &object})
	if err != nil {
		return nil, fmt.Errorf("indexwriter: list comments of object %d on branch %d: %w", object, branch, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	typ := int64(-1)
	chain := t.chain(branch)
	if chain == nil {
		chain = []int64{branch, content.BranchDefault}
	}
	objs, err := ix.st.GetObjectsIn(ctx, chain, []int64{object})
	if err != nil {
		return nil, fmt.Errorf("indexwriter: read object %d: %w", object, err)
	}
	if len(objs) > 0 {
		typ = objs[0].TypeID
	}
	ops := make([]search.Op, 0, len(rows))
	for _, c := range rows {
		ops = append(ops, search.Upsert(CommentDocument(c, typ, version)))
	}
	return ops, nil
}

// CommentDocument renders one comment; objectType < 0 = unknown (0 is
// the meta-type root: comments on types).
func CommentDocument(c store.Comment, objectType, version int64) search.Document {
	f := fields{}
	f.set(indexdoc.FieldCommentID, c.ID)
	f.set(indexdoc.FieldCommentBranch, c.Branch)
	f.set(indexdoc.FieldCommentObjectRef, c.ObjectID)
	if objectType >= 0 {
		f.set(indexdoc.FieldCommentObjectType, objectType)
	}
	if c.User != "" {
		f.set(indexdoc.FieldCommentUser, indexdoc.Truncate(c.User))
		f.set(indexdoc.FieldCommentUserKey, indexdoc.Truncate(store.CommentUserKey(c.User)))
	}
	f.set(indexdoc.FieldCommentCreated, c.Created.UnixMicro())
	f.set(indexdoc.FieldCommentModified, c.Modified.UnixMicro())
	text, mentions := ParseCommentBody(c.Body)
	if text != "" {
		f.set(indexdoc.FieldCommentText, text)
	}
	f.set(indexdoc.FieldCommentSummary, CommentSummary(text))
	for _, m := range mentions {
		f.add(indexdoc.FieldCommentMentioned, indexdoc.Truncate(m))
		f.add(indexdoc.FieldCommentMentionKey, indexdoc.Truncate(store.CommentUserKey(m)))
	}
	f.set(indexdoc.FieldCommentDeleted, c.Deleted)
	return search.Document{ID: indexdoc.CommentDocID(c.ID), Version: version, Fields: f.done()}
}

func (ix *Indexer) writeComments(ctx context.Context, ops []search.Op, res *ApplyResult) error {
	for start := 0; start < len(ops); start += ix.opts.Batch {
		chunk := ops[start:min(start+ix.opts.Batch, len(ops))]
		r, err := ix.eng.Bulk(ctx, ix.CommentsIndex(), chunk)
		if err != nil {
			return fmt.Errorf("indexwriter: bulk %s: %w", ix.CommentsIndex(), err)
		}
		res.Ops += len(chunk)
		res.Applied += r.Applied
		res.Stale += r.Stale
	}
	return nil
}

// purgeBranchComments deletes the comment documents of a deleted branch.
// A comments index that does not exist yet holds nothing to delete.
func (ix *Indexer) purgeBranchComments(ctx context.Context, branch, version int64, res *ApplyResult) error {
	var after int64 = -1
	for {
		r, err := ix.eng.Search(ctx, search.SearchRequest{Index: ix.CommentsIndex(),
			Query: search.And{search.Term{Field: indexdoc.FieldCommentBranch, Value: branch}, search.Range{Field: indexdoc.FieldCommentID, Gt: after}},
			Sort:  []search.SortField{{Field: indexdoc.FieldCommentID}}, Size: ix.opts.Batch})
		if errors.Is(err, search.ErrIndexNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("indexwriter: list comments of branch %d: %w", branch, err)
		}
		if len(r.Hits) == 0 {
			break
		}
		ops := make([]search.Op, 0, len(r.Hits))
		for _, h := range r.Hits {
			ops = append(ops, search.Delete(h.ID, version))
			if id, ok := h.Fields[indexdoc.FieldCommentID].(int64); ok {
				after = max(after, id)
			}
		}
		if err := ix.writeComments(ctx, ops, res); err != nil {
			return err
		}
		if len(r.Hits) < ix.opts.Batch {
			break
		}
	}
	if err := ix.eng.Refresh(ctx, ix.CommentsIndex()); err != nil {
		return fmt.Errorf("indexwriter: refresh %s: %w", ix.CommentsIndex(), err)
	}
	return nil
}

// IndexAllComments (re)indexes every comment in the store at version
// (e.g. the store's newest transaction), for a backfill or reindex. It
// does not touch the comment timestamp.
func (ix *Indexer) IndexAllComments(ctx context.Context, version int64) (ApplyResult, error) {
	var res ApplyResult
	if err := ix.EnsureCommentIndexes(ctx); err != nil {
		return res, err
	}
	t, err := loadTree(ctx, ix.st)
	if err != nil {
		return res, err
	}
	types := map[[2]int64]int64{}
	var before int64
	for {
		rows, err := ix.st.ListComments(ctx, store.CommentQuery{BeforeID: before, Limit: ix.opts.Batch})
		if err != nil {
			return res, fmt.Errorf("indexwriter: list comments: %w", err)
		}
		ops := make([]search.Op, 0, len(rows))
		for _, c := range rows {
			k := [2]int64{c.Branch, c.ObjectID}
			typ, ok := types[k]
			if !ok {
				typ = -1
				chain := t.chain(c.Branch)
				if chain == nil {
					chain = []int64{c.Branch}
				}
				objs, err := ix.st.GetObjectsIn(ctx, chain, []int64{c.ObjectID})
				if err != nil {
					return res, fmt.Errorf("indexwriter: read object %d: %w", c.ObjectID, err)
				}
				if len(objs) > 0 {
					typ = objs[0].TypeID
				}
				types[k] = typ
			}
			ops = append(ops, search.Upsert(CommentDocument(c, typ, version)))
		}
		if err := ix.writeComments(ctx, ops, &res); err != nil {
			return res, err
		}
		if len(rows) < ix.opts.Batch {
			break
		}
		before = rows[len(rows)-1].ID
	}
	if err := ix.eng.Refresh(ctx, ix.CommentsIndex()); err != nil {
		return res, fmt.Errorf("indexwriter: refresh %s: %w", ix.CommentsIndex(), err)
	}
	return res, nil
}

// CommentTimestamp returns the comment index's change-tracking timestamp;
// ok is false before the first comment event.
func (ix *Indexer) CommentTimestamp(ctx context.Context) (ts time.Time, ok bool, err error) {
	return ix.tracking.CommentTimestamp(ctx)
}

// WaitForCommentTimestamp waits until the comment timestamp is at least
// minTS or maxWait has passed, like WaitForVersion (indexdoc.ErrWaitTimeout
// on timeout, with the timestamp seen last).
func (ix *Indexer) WaitForCommentTimestamp(ctx context.Context, minTS time.Time, maxWait time.Duration) (time.Time, bool, error) {
	return ix.tracking.WaitForCommentTimestamp(ctx, minTS, maxWait)
}
