package content

import (
	"context"
	"errors"
	"slices"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/store"
)

// appendChange appends the change event of a write (pkg/changes) to the
// outbox: one event per write transaction, on the branch's subject.
func appendChange(ctx context.Context, tx store.Tx, branch int64, kind string, ids []int64) error {
	return appendEvent(ctx, tx, changes.Event{Branch: branch, Transaction: tx.ID(), ObjectIDs: ids, Kind: kind})
}

// appendEvent appends ev to the outbox of tx.
func appendEvent(ctx context.Context, tx store.Tx, ev changes.Event) error {
	payload, err := changes.Encode(ev)
	if err != nil {
		return err
	}
	return tx.AppendOutbox(ctx, store.OutboxEvent{
		Subject: changes.Subject(ev.Branch),
		MsgID:   changes.MsgID(tx.ID()),
		Payload: payload,
	})
}

// ChangeTypes returns the types of the objects of a change event
// (tombstones included), looked up on the event's branch and, for objects
// inherited, on the default branch; each type once, in the order found.
// The webhook dispatcher and the live change stream filter by them.
func ChangeTypes(ctx context.Context, r store.Reader, ev changes.Event) ([]int64, error) {
	if len(ev.ObjectIDs) == 0 {
		return nil, nil
	}
	branches := []int64{ev.Branch}
	if ev.Branch != BranchDefault {
		branches = append(branches, BranchDefault)
	}
	objs, err := r.GetObjectsIn(ctx, branches, ev.ObjectIDs)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	var types []int64
	for _, o := range objs {
		if !slices.Contains(types, o.TypeID) {
			types = append(types, o.TypeID)
		}
	}
	return types, nil
}
