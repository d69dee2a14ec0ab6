package content

import (
	"context"
	"strconv"

	"github.com/cmsplatform/cms/pkg/changes"
)

// RevertTransaction undoes what transaction tx wrote on a branch, as one
// new transaction whatever the number of objects (a promote of 10,000
// objects included; at most MaxPromoteObjects): every object it wrote
// there gets back its state after tx-1 (RevertObjects' rules), and an
// object it created there is deleted. The comment says what it reverted
// (after ch.Comment if given). A transaction that wrote nothing on the
// branch is ErrInvalid.
func (s *Service) RevertTransaction(ctx context.Context, branch string, ch Change, txID int64) (RevertResult, error) {
	if err := s.checkAsOf(ctx, txID); err != nil {
		return RevertResult{}, err
	}
	pre, err := viewOf(ctx, s.st, branch)
	if err != nil {
		return RevertResult{}, err
	}
	ids, err := s.st.TransactionObjectIDs(ctx, pre.branch, txID)
	switch {
	case err != nil:
		return RevertResult{}, err
	case len(ids) == 0:
		return RevertResult{}, invalidf("transaction %d wrote nothing on branch %d", txID, pre.branch)
	case len(ids) > MaxPromoteObjects:
		return RevertResult{}, invalidf("transaction %d wrote %d objects, at most %d are reverted at once", txID, len(ids), MaxPromoteObjects)
	}
	what := "reverted transaction " + strconv.FormatInt(txID, 10)
	if ch.Comment == "" {
		ch.Comment = "Reverted transaction " + strconv.FormatInt(txID, 10)
	} else {
		ch.Comment += " [" + what + "]"
	}
	tx, v, err := s.writeTx(ctx, branch, ch)
	if err != nil {
		return RevertResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	before, err := v.asOf(s.st, txID-1).objects(ctx, ids)
	if err != nil {
		return RevertResult{}, err
	}
	var existed, created []int64
	for _, id := range ids {
		if _, ok := before[id]; ok {
			existed = append(existed, id)
		} else {
			created = append(created, id)
		}
	}
	n, err := s.revert(ctx, tx, v, ch, existed, txID-1, nil)
	if err != nil {
		return RevertResult{}, err
	}
	if len(created) > 0 {
		rows, err := v.objects(ctx, created)
		if err != nil {
			return RevertResult{}, err
		}
		for _, id := range created {
			// Deleting what the transaction created: the rules of
			// revert (revert.go) for a then-deleted object.
			switch typ := rows[id].TypeID; {
			case isSystemID(id):
				return RevertResult{}, invalidf("object %d is a protected system object", id)
			case typ == TypeBranch:
				return RevertResult{}, invalidf("object %d is a branch: branches are not reverted", id)
			case typ == TypeUser:
				return RevertResult{}, invalidf("object %d is a user: users are not reverted", id)
			}
			if err := guardObject(ch, v.branch, id, rows[id].TypeID); err != nil {
				return RevertResult{}, err
			}
		}
		gone, err := tx.DeleteObjects(ctx, v.branch, created)
		if err != nil {
			return RevertResult{}, err
		}
		n += gone
	}
	t, err := commit(ctx, tx, ch, v.branch, changes.KindUpdated, ids)
	if err != nil {
		return RevertResult{}, err
	}
	return RevertResult{RevertedObjects: n, Transaction: t}, nil
}
