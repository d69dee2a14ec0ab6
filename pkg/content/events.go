package content

import (
	"context"

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
