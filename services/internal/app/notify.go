package app

import (
	"context"

	"github.com/cmsplatform/cms/pkg/store"
)

// notifyingStore calls notify after every committed write transaction, so
// the outbox relay publishes at once instead of at its next poll (the
// write → searchable latency is otherwise dominated by the poll interval).
type notifyingStore struct {
	store.Store
	notify func()
}

func (s notifyingStore) Begin(ctx context.Context, meta store.TxMeta) (store.Tx, error) {
	tx, err := s.Store.Begin(ctx, meta)
	if err != nil {
		return nil, err
	}
	return notifyingTx{Tx: tx, notify: s.notify}, nil
}

type notifyingTx struct {
	store.Tx
	notify func()
}

func (t notifyingTx) Commit(ctx context.Context) error {
	if err := t.Tx.Commit(ctx); err != nil {
		return err
	}
	t.notify()
	return nil
}
