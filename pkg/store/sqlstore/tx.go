package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tracing"
	"go.opentelemetry.io/otel/trace"
)

// writeTx implements store.Tx as a member of a transaction group
// (group.go): the group's first member runs in the driver transaction
// itself, each later one in a savepoint of it.
type writeTx struct {
	reader
	w     *writer
	g     *group
	first bool // no savepoint: a rollback ends the group
	meta  store.Transaction
	ctx   context.Context // Begin's context, for Rollback
	done  bool
}

func (t *writeTx) ID() int64               { return t.meta.ID }
func (t *writeTx) Meta() store.Transaction { return t.meta }

func (t *writeTx) check() error {
	if t.done {
		return store.ErrTxDone
	}
	return nil
}

func (t *writeTx) NewObjectIDs(ctx context.Context, n int) ([]int64, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: cannot allocate %d ids", store.ErrInvalidArgument, n)
	}
	if n == 0 {
		return nil, nil
	}
	var last int64
	if err := t.g.tx.QueryRow(ctx, t.st.allocateObjectIDs, n).Scan(&last); err != nil {
		return nil, errorf(t.d, err, "allocate object ids")
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n) + 1 + int64(i)
	}
	return ids, nil
}

func (t *writeTx) PutObjects(ctx context.Context, objs ...store.Object) error {
	if err := t.check(); err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	if err := store.CheckObjects(objs); err != nil {
		return err
	}
	err := t.g.tx.ExecBatch(ctx, func(b Batch) {
		for _, o := range objs {
			var api any // NULL for none
			if o.APIIdentifier != "" {
				api = o.APIIdentifier
			}
			b.Queue(t.st.putObject, o.Branch, o.ID, o.TypeID, o.GUID, api, o.Deleted, t.meta.ID, t.meta.ID)
			b.Queue(t.st.putObjectVersion, o.Branch, o.ID, t.meta.ID, o.TypeID, o.GUID, api, o.Deleted)
		}
		b.Queue(t.st.raiseObjectCounter, store.MaxID(objs))
	})
	if err != nil {
		return errorf(t.d, err, "put objects")
	}
	return nil
}

func (t *writeTx) DeleteObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	// The rows about to become tombstones leave a deleted version first.
	if _, err := t.g.tx.Exec(ctx, t.st.deleteObjectVersions, t.meta.ID, branch, t.d.Int64List(ids)); err != nil {
		return 0, errorf(t.d, err, "record deleted objects")
	}
	n, err := t.g.tx.Exec(ctx, t.st.deleteObjects, t.meta.ID, branch, t.d.Int64List(ids))
	if err != nil {
		return 0, errorf(t.d, err, "delete objects")
	}
	return int(n), nil
}

func (t *writeTx) PutValues(ctx context.Context, values ...store.Value) error {
	if err := t.check(); err != nil {
		return err
	}
	js, err := store.NormalizeValues(values)
	if err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	// Held back until the next statement or the commit (deferredTx).
	t.g.tx.later(func(b Batch) {
		for i, v := range values {
			b.Queue(t.st.putValue,
				v.Branch, v.ObjectID, v.AttributeID, v.Variant, v.Language, v.SortReverse, string(js[i]), v.UnitRef, t.meta.ID)
			b.Queue(t.st.putVersion,
				v.Branch, v.ObjectID, t.meta.ID, v.AttributeID, v.Variant, v.Language, v.SortReverse, string(js[i]), v.UnitRef)
		}
	})
	return nil
}

func (t *writeTx) DeleteValues(ctx context.Context, branch int64, objectIDs []int64, f store.ValueFilter) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(objectIDs) == 0 {
		return 0, nil
	}
	// The deleted values leave a version without a value (history.go).
	v := t.newQuery()
	v.add(`INSERT INTO value_versions (`+versionColumns+`)
		SELECT branch, object_id, ?, attribute_id, variant, language, sort_reverse, NULL, NULL
		FROM object_values`, t.meta.ID)
	v.where(`branch = ?`, branch)
	v.whereIn("object_id", objectIDs)
	v.whereValues(f)
	v.add(` ON CONFLICT (` + versionKey + `) DO UPDATE SET value = NULL, unit_ref = NULL`)
	if _, err := t.g.tx.Exec(ctx, v.sql(), v.args...); err != nil {
		return 0, errorf(t.d, err, "record deleted values")
	}
	b := t.newQuery()
	b.add(`DELETE FROM object_values`)
	b.where(`branch = ?`, branch)
	b.whereIn("object_id", objectIDs)
	b.whereValues(f)
	n, err := t.g.tx.Exec(ctx, b.sql(), b.args...)
	if err != nil {
		return 0, errorf(t.d, err, "delete values")
	}
	return int(n), nil
}

func (t *writeTx) AppendOutbox(ctx context.Context, events ...store.OutboxEvent) error {
	if err := t.check(); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		if e.Subject == "" {
			return fmt.Errorf("%w: outbox event without subject", store.ErrInvalidArgument)
		}
	}
	trace := tracing.Traceparent(ctx)
	// Held back until the next statement or the commit (deferredTx).
	t.g.tx.later(func(b Batch) {
		for _, e := range events {
			payload := e.Payload
			if payload == nil {
				payload = []byte{}
			}
			if e.Trace == "" {
				e.Trace = trace
			}
			b.Queue(t.st.appendOutbox, t.meta.ID, e.Subject, e.MsgID, payload, e.Trace)
		}
		// The newest transaction per subject (LastOutboxTransaction):
		// transactions commit in id order, so the last writer's id is
		// the highest.
		marked := map[string]bool{}
		for _, e := range events {
			if !marked[e.Subject] {
				marked[e.Subject] = true
				b.Queue(t.st.markOutboxSubject, e.Subject, t.meta.ID)
			}
		}
	})
	return nil
}

// Commit hands the writer on and returns once the group's commit has made
// the writes durable. The member's savepoint stays (see savepoint).
func (t *writeTx) Commit(ctx context.Context) (err error) {
	if err := t.check(); err != nil {
		return err
	}
	_, span := tracing.Start(ctx, "store.commit", trace.SpanKindClient)
	defer func() { tracing.End(span, err) }()
	t.done = true
	g := t.g
	if g.failed == nil {
		g.members++
		g.nextID = t.meta.ID + 1
		g.last = t.meta.ID
	}
	t.w.handOver(g)
	if err := g.wait(ctx); err != nil {
		return errorf(t.d, err, "commit %d", t.meta.ID)
	}
	if g.lastErr != nil && g.last == t.meta.ID {
		return errorf(t.d, g.lastErr, "commit %d", t.meta.ID)
	}
	return nil
}

// Rollback undoes the member's writes (to its savepoint; the first member's
// rollback ends the group, which then has no other member) and hands the
// writer on. It does not wait for the group.
func (t *writeTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	g := t.g
	var err error
	switch {
	case t.first:
		g.fail(errors.New("its first transaction was rolled back"))
	case g.failed != nil: // nothing to undo: the group is rolled back
	default:
		// Its held-back writes are its own: the previous member's went
		// with this one's savepoint.
		g.tx.discard()
		_, err = g.tx.Exec(context.WithoutCancel(t.ctx), "ROLLBACK TO SAVEPOINT "+savepoint)
	}
	if err != nil {
		g.fail(err)
	}
	t.w.handOver(g)
	if err != nil {
		return errorf(t.d, err, "rollback %d", t.meta.ID)
	}
	return nil
}

func (t *writeTx) PurgeObjects(ctx context.Context, branch int64, ids []int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	list := t.d.Int64List(ids)
	if _, err := t.g.tx.Exec(ctx, t.st.purgeValues, branch, list); err != nil {
		return 0, errorf(t.d, err, "purge values")
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeVersions, branch, list); err != nil {
		return 0, errorf(t.d, err, "purge value versions")
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeObjectVersions, branch, list); err != nil {
		return 0, errorf(t.d, err, "purge object versions")
	}
	n, err := t.g.tx.Exec(ctx, t.st.purgeObjects, branch, list)
	if err != nil {
		return 0, errorf(t.d, err, "purge objects")
	}
	return int(n), nil
}

func (t *writeTx) PurgeBranch(ctx context.Context, branch int64) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeBranchValues, branch); err != nil {
		return 0, errorf(t.d, err, "purge branch values")
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeBranchVersions, branch); err != nil {
		return 0, errorf(t.d, err, "purge branch value versions")
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeBranchObjVersion, branch); err != nil {
		return 0, errorf(t.d, err, "purge branch object versions")
	}
	if _, err := t.g.tx.Exec(ctx, t.st.purgeBranchComment, branch); err != nil {
		return 0, errorf(t.d, err, "purge branch comments")
	}
	n, err := t.g.tx.Exec(ctx, t.st.purgeBranchObjects, branch)
	if err != nil {
		return 0, errorf(t.d, err, "purge branch objects")
	}
	return int(n), nil
}
