package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/component"
)

// WithDeadline bounds every call of s, and of the transactions it begins,
// with g's deadline (per call, not per transaction) and reports an
// unreachable, refusing or too slow database as component.ErrUnavailable.
// Begin waits for the write lock within the same deadline. Methods added
// to the interfaces later pass through unbounded until they are listed
// here.
func WithDeadline(s Store, g component.Guard) Store { return &deadlineStore{Store: s, g: g} }

type deadlineStore struct {
	Store
	g component.Guard
}

// Begin cannot hand the implementation a context that ends with the call:
// a transaction lives as long as the context it began with (database/sql
// rolls it back when that ends). It runs Begin on the caller's context and
// stops waiting after the deadline instead; a transaction that arrives
// after that is rolled back.
func (d *deadlineStore) Begin(ctx context.Context, meta TxMeta) (Tx, error) {
	if d.g.Timeout <= 0 {
		tx, err := d.Store.Begin(ctx, meta)
		if err != nil {
			return nil, d.g.Classify(ctx, err)
		}
		return &deadlineTx{Tx: tx, g: d.g}, nil
	}
	type begun struct {
		tx  Tx
		err error
	}
	ch := make(chan begun, 1)
	go func() {
		tx, err := d.Store.Begin(ctx, meta)
		ch <- begun{tx, err}
	}()
	timer := time.NewTimer(d.g.Timeout)
	defer timer.Stop()
	select {
	case b := <-ch:
		if b.err != nil {
			return nil, d.g.Classify(ctx, b.err)
		}
		return &deadlineTx{Tx: b.tx, g: d.g}, nil
	case <-timer.C:
		go func() {
			if b := <-ch; b.tx != nil {
				_ = b.tx.Rollback()
			}
		}()
		return nil, d.g.Classify(ctx, fmt.Errorf("begin: %w", context.DeadlineExceeded))
	}
}

func (d *deadlineStore) LastTransactionID(ctx context.Context) (int64, error) {
	return component.Call(ctx, d.g, d.Store.LastTransactionID)
}

func (d *deadlineStore) LastOutboxTransaction(ctx context.Context, subjectPrefix string) (int64, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int64, error) {
		return d.Store.LastOutboxTransaction(ctx, subjectPrefix)
	})
}

func (d *deadlineStore) Ping(ctx context.Context) error { return d.g.Do(ctx, d.Store.Ping) }

func (d *deadlineStore) ClaimOutbox(ctx context.Context, limit int) ([]OutboxEvent, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]OutboxEvent, error) { return d.Store.ClaimOutbox(ctx, limit) })
}

func (d *deadlineStore) AckOutbox(ctx context.Context, ids []int64) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Store.AckOutbox(ctx, ids) })
}

func (d *deadlineStore) GetTransaction(ctx context.Context, id int64) (Transaction, error) {
	return deadlineReader{d.Store, d.g}.GetTransaction(ctx, id)
}
func (d *deadlineStore) GetTransactions(ctx context.Context, ids []int64) ([]Transaction, error) {
	return deadlineReader{d.Store, d.g}.GetTransactions(ctx, ids)
}
func (d *deadlineStore) GetObject(ctx context.Context, branch, id int64) (Object, error) {
	return deadlineReader{d.Store, d.g}.GetObject(ctx, branch, id)
}
func (d *deadlineStore) GetObjects(ctx context.Context, branch int64, ids []int64) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.GetObjects(ctx, branch, ids)
}
func (d *deadlineStore) FindObjects(ctx context.Context, branch int64, guids, apiIDs []string) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.FindObjects(ctx, branch, guids, apiIDs)
}
func (d *deadlineStore) ListObjects(ctx context.Context, branch int64, q ObjectQuery) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.ListObjects(ctx, branch, q)
}
func (d *deadlineStore) ListValues(ctx context.Context, branch int64, ids []int64, f ValueFilter) ([]Value, error) {
	return deadlineReader{d.Store, d.g}.ListValues(ctx, branch, ids, f)
}
func (d *deadlineStore) ListBranchObjectIDs(ctx context.Context, branch, afterID int64, limit int) ([]int64, error) {
	return deadlineReader{d.Store, d.g}.ListBranchObjectIDs(ctx, branch, afterID, limit)
}
func (d *deadlineStore) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.GetObjectsIn(ctx, branches, ids)
}
func (d *deadlineStore) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIDs []string) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.FindObjectsIn(ctx, branches, guids, apiIDs)
}
func (d *deadlineStore) ListObjectsIn(ctx context.Context, branches []int64, q ObjectQuery) ([]Object, error) {
	return deadlineReader{d.Store, d.g}.ListObjectsIn(ctx, branches, q)
}
func (d *deadlineStore) ListValuesIn(ctx context.Context, branches, ids []int64, f ValueFilter) ([]Value, error) {
	return deadlineReader{d.Store, d.g}.ListValuesIn(ctx, branches, ids, f)
}
func (d *deadlineStore) GetComment(ctx context.Context, id int64) (Comment, error) {
	return deadlineReader{d.Store, d.g}.GetComment(ctx, id)
}
func (d *deadlineStore) ListComments(ctx context.Context, q CommentQuery) ([]Comment, error) {
	return deadlineReader{d.Store, d.g}.ListComments(ctx, q)
}

// deadlineReader bounds the read methods of a Store or a Tx.
type deadlineReader struct {
	r Reader
	g component.Guard
}

func (d deadlineReader) GetTransaction(ctx context.Context, id int64) (Transaction, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Transaction, error) { return d.r.GetTransaction(ctx, id) })
}
func (d deadlineReader) GetTransactions(ctx context.Context, ids []int64) ([]Transaction, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Transaction, error) { return d.r.GetTransactions(ctx, ids) })
}
func (d deadlineReader) GetObject(ctx context.Context, branch, id int64) (Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Object, error) { return d.r.GetObject(ctx, branch, id) })
}
func (d deadlineReader) GetObjects(ctx context.Context, branch int64, ids []int64) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) { return d.r.GetObjects(ctx, branch, ids) })
}
func (d deadlineReader) FindObjects(ctx context.Context, branch int64, guids, apiIDs []string) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) {
		return d.r.FindObjects(ctx, branch, guids, apiIDs)
	})
}
func (d deadlineReader) ListObjects(ctx context.Context, branch int64, q ObjectQuery) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) { return d.r.ListObjects(ctx, branch, q) })
}
func (d deadlineReader) ListValues(ctx context.Context, branch int64, ids []int64, f ValueFilter) ([]Value, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Value, error) { return d.r.ListValues(ctx, branch, ids, f) })
}
func (d deadlineReader) ListBranchObjectIDs(ctx context.Context, branch, afterID int64, limit int) ([]int64, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]int64, error) {
		return d.r.ListBranchObjectIDs(ctx, branch, afterID, limit)
	})
}
func (d deadlineReader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) { return d.r.GetObjectsIn(ctx, branches, ids) })
}
func (d deadlineReader) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIDs []string) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) {
		return d.r.FindObjectsIn(ctx, branches, guids, apiIDs)
	})
}
func (d deadlineReader) ListObjectsIn(ctx context.Context, branches []int64, q ObjectQuery) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) { return d.r.ListObjectsIn(ctx, branches, q) })
}
func (d deadlineReader) ListValuesIn(ctx context.Context, branches, ids []int64, f ValueFilter) ([]Value, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Value, error) {
		return d.r.ListValuesIn(ctx, branches, ids, f)
	})
}
func (d deadlineReader) GetComment(ctx context.Context, id int64) (Comment, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Comment, error) { return d.r.GetComment(ctx, id) })
}
func (d deadlineReader) ListComments(ctx context.Context, q CommentQuery) ([]Comment, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Comment, error) { return d.r.ListComments(ctx, q) })
}

// deadlineTx bounds each call of a write transaction.
type deadlineTx struct {
	Tx
	g component.Guard
}

func (d *deadlineTx) rd() deadlineReader { return deadlineReader{d.Tx, d.g} }

func (d *deadlineTx) GetTransaction(ctx context.Context, id int64) (Transaction, error) {
	return d.rd().GetTransaction(ctx, id)
}
func (d *deadlineTx) GetTransactions(ctx context.Context, ids []int64) ([]Transaction, error) {
	return d.rd().GetTransactions(ctx, ids)
}
func (d *deadlineTx) GetObject(ctx context.Context, branch, id int64) (Object, error) {
	return d.rd().GetObject(ctx, branch, id)
}
func (d *deadlineTx) GetObjects(ctx context.Context, branch int64, ids []int64) ([]Object, error) {
	return d.rd().GetObjects(ctx, branch, ids)
}
func (d *deadlineTx) FindObjects(ctx context.Context, branch int64, guids, apiIDs []string) ([]Object, error) {
	return d.rd().FindObjects(ctx, branch, guids, apiIDs)
}
func (d *deadlineTx) ListObjects(ctx context.Context, branch int64, q ObjectQuery) ([]Object, error) {
	return d.rd().ListObjects(ctx, branch, q)
}
func (d *deadlineTx) ListValues(ctx context.Context, branch int64, ids []int64, f ValueFilter) ([]Value, error) {
	return d.rd().ListValues(ctx, branch, ids, f)
}
func (d *deadlineTx) ListBranchObjectIDs(ctx context.Context, branch, afterID int64, limit int) ([]int64, error) {
	return d.rd().ListBranchObjectIDs(ctx, branch, afterID, limit)
}
func (d *deadlineTx) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]Object, error) {
	return d.rd().GetObjectsIn(ctx, branches, ids)
}
func (d *deadlineTx) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIDs []string) ([]Object, error) {
	return d.rd().FindObjectsIn(ctx, branches, guids, apiIDs)
}
func (d *deadlineTx) ListObjectsIn(ctx context.Context, branches []int64, q ObjectQuery) ([]Object, error) {
	return d.rd().ListObjectsIn(ctx, branches, q)
}
func (d *deadlineTx) ListValuesIn(ctx context.Context, branches, ids []int64, f ValueFilter) ([]Value, error) {
	return d.rd().ListValuesIn(ctx, branches, ids, f)
}
func (d *deadlineTx) GetComment(ctx context.Context, id int64) (Comment, error) {
	return d.rd().GetComment(ctx, id)
}
func (d *deadlineTx) ListComments(ctx context.Context, q CommentQuery) ([]Comment, error) {
	return d.rd().ListComments(ctx, q)
}

func (d *deadlineTx) NewObjectIDs(ctx context.Context, n int) ([]int64, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]int64, error) { return d.Tx.NewObjectIDs(ctx, n) })
}
func (d *deadlineTx) PutObjects(ctx context.Context, objs ...Object) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Tx.PutObjects(ctx, objs...) })
}
func (d *deadlineTx) DeleteObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int, error) { return d.Tx.DeleteObjects(ctx, branch, ids) })
}
func (d *deadlineTx) PurgeObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int, error) { return d.Tx.PurgeObjects(ctx, branch, ids) })
}
func (d *deadlineTx) PurgeBranch(ctx context.Context, branch int64) (int, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int, error) { return d.Tx.PurgeBranch(ctx, branch) })
}
func (d *deadlineTx) PutValues(ctx context.Context, values ...Value) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Tx.PutValues(ctx, values...) })
}
func (d *deadlineTx) DeleteValues(ctx context.Context, branch int64, ids []int64, f ValueFilter) (int, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int, error) { return d.Tx.DeleteValues(ctx, branch, ids, f) })
}
func (d *deadlineTx) AppendOutbox(ctx context.Context, events ...OutboxEvent) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Tx.AppendOutbox(ctx, events...) })
}
func (d *deadlineTx) InsertComment(ctx context.Context, c Comment) (Comment, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Comment, error) { return d.Tx.InsertComment(ctx, c) })
}
func (d *deadlineTx) UpdateCommentBody(ctx context.Context, id int64, body string) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Tx.UpdateCommentBody(ctx, id, body) })
}
func (d *deadlineTx) DeleteComment(ctx context.Context, id int64) (bool, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (bool, error) { return d.Tx.DeleteComment(ctx, id) })
}
func (d *deadlineTx) Commit(ctx context.Context) error { return d.g.Do(ctx, d.Tx.Commit) }

func (d *deadlineStore) GetJob(ctx context.Context, id int64) (Job, error) {
	return deadlineReader{d.Store, d.g}.GetJob(ctx, id)
}
func (d *deadlineStore) ListJobs(ctx context.Context, q JobQuery) ([]Job, error) {
	return deadlineReader{d.Store, d.g}.ListJobs(ctx, q)
}
func (d deadlineReader) GetJob(ctx context.Context, id int64) (Job, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Job, error) { return d.r.GetJob(ctx, id) })
}
func (d deadlineReader) ListJobs(ctx context.Context, q JobQuery) ([]Job, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Job, error) { return d.r.ListJobs(ctx, q) })
}
func (d *deadlineTx) GetJob(ctx context.Context, id int64) (Job, error) {
	return d.rd().GetJob(ctx, id)
}
func (d *deadlineTx) ListJobs(ctx context.Context, q JobQuery) ([]Job, error) {
	return d.rd().ListJobs(ctx, q)
}
func (d *deadlineTx) InsertJob(ctx context.Context, j Job) (Job, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (Job, error) { return d.Tx.InsertJob(ctx, j) })
}
func (d *deadlineTx) UpdateJob(ctx context.Context, j Job) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Tx.UpdateJob(ctx, j) })
}

func (d *deadlineStore) AppendWebhookAttempts(ctx context.Context, attempts []WebhookAttempt) error {
	return d.g.Do(ctx, func(ctx context.Context) error { return d.Store.AppendWebhookAttempts(ctx, attempts) })
}
func (d *deadlineStore) ListWebhookAttempts(ctx context.Context, q WebhookAttemptQuery) ([]WebhookAttempt, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]WebhookAttempt, error) { return d.Store.ListWebhookAttempts(ctx, q) })
}
func (d *deadlineStore) PruneWebhookAttempts(ctx context.Context, p WebhookPrune) (int, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (int, error) { return d.Store.PruneWebhookAttempts(ctx, p) })
}

func (d *deadlineStore) ValueHistory(ctx context.Context, q HistoryQuery) ([]ValueVersion, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]ValueVersion, error) { return d.Store.ValueHistory(ctx, q) })
}
func (d *deadlineStore) ObjectHistory(ctx context.Context, q HistoryQuery) (ObjectChanges, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) (ObjectChanges, error) { return d.Store.ObjectHistory(ctx, q) })
}
func (d *deadlineStore) TransactionObjectIDs(ctx context.Context, branch, tx int64) ([]int64, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]int64, error) { return d.Store.TransactionObjectIDs(ctx, branch, tx) })
}
func (d *deadlineStore) ObjectsAsOf(ctx context.Context, branches, ids []int64, asOf int64) ([]Object, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Object, error) { return d.Store.ObjectsAsOf(ctx, branches, ids, asOf) })
}
func (d *deadlineStore) ValuesAsOf(ctx context.Context, branches, ids []int64, asOf int64) ([]Value, error) {
	return component.Call(ctx, d.g, func(ctx context.Context) ([]Value, error) { return d.Store.ValuesAsOf(ctx, branches, ids, asOf) })
}

// PruneHistory has two results besides the error: Do captures them, as
// component.Call does one.
func (d *deadlineStore) PruneHistory(ctx context.Context, before time.Time, afterTx int64, limit int) (int, int64, error) {
	var n int
	var last int64
	err := d.g.Do(ctx, func(ctx context.Context) error {
		var err error
		n, last, err = d.Store.PruneHistory(ctx, before, afterTx, limit)
		return err
	})
	return n, last, err
}
