package content

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cmsplatform/cms/pkg/store"
)

// Change kinds in outbox payloads.
const (
	kindCreated = "created"
	kindUpdated = "updated"
	kindDeleted = "deleted"
	// kindBranchDeleted: the branch in the payload and everything stored on
	// it were removed permanently.
	kindBranchDeleted = "branchDeleted"
)

// ChangeEvent is the outbox payload of every write: one event per write
// transaction, on subject "cms.changes.<branch>", MsgID "tx-<id>".
type ChangeEvent struct {
	Branch      int64   `json:"branch"`
	Transaction int64   `json:"transaction"`
	ObjectIDs   []int64 `json:"objectIds"`
	Kind        string  `json:"kind"`
}

// ChangeSubject is the subject of change events of branch.
func ChangeSubject(branch int64) string { return fmt.Sprintf("cms.changes.%d", branch) }

func appendChange(ctx context.Context, tx store.Tx, branch int64, kind string, ids []int64) error {
	if ids == nil {
		ids = []int64{}
	}
	payload, err := json.Marshal(ChangeEvent{Branch: branch, Transaction: tx.ID(), ObjectIDs: ids, Kind: kind})
	if err != nil {
		return err
	}
	return tx.AppendOutbox(ctx, store.OutboxEvent{
		Subject: ChangeSubject(branch),
		MsgID:   fmt.Sprintf("tx-%d", tx.ID()),
		Payload: payload,
	})
}
