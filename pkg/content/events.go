package content

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/store"
)

// appendChange appends the change event of a write (pkg/changes) to the
// outbox: one event per write transaction, on the branch's subject.
func appendChange(ctx context.Context, tx store.Tx, branch int64, kind string, ids []int64) error {
	return appendEvent(ctx, tx, changes.Event{Branch: branch, Transaction: tx.ID(), ObjectIDs: ids, Kind: kind})
}

// appendEvent appends ev to the outbox of tx, naming the transaction's user
// (who changed what, for the change stream).
func appendEvent(ctx context.Context, tx store.Tx, ev changes.Event) error {
	ev.User = tx.Meta().User
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

// Touch is what one change event touched: its objects and, as stored now
// on the event's branch chain (ChangeChain), their types, ApiIdentifiers
// and GUIDs. It is the one rule the consumers of change events filter and
// evict by: the webhooks and the change stream filter by Types, the render
// cache and Delivery's response cache evict by all of it. An object
// created on a branch and edited on a descendant has no row on the
// descendant (the edit stores values only), so only the chain finds it.
type Touch struct {
	// Chain is the event's branch, its parent, … the default branch (nil
	// for an event without objects: nothing was looked up).
	Chain []int64
	// Objects are the event's objects, each once, ascending.
	Objects []int64
	// Effective is the row of each object found, the one of the nearest
	// branch of the chain (model.Chain.EffectiveObjects).
	Effective map[int64]store.Object
	// Types, APIIdentifiers and GUIDs are those of every row of the
	// objects on the chain (tombstones included), each once, in the
	// chain's order: a row hidden by a nearer one still names what the
	// change may have moved away from (an ApiIdentifier overridden on the
	// descendant).
	Types          []int64
	APIIdentifiers []string
	GUIDs          []string
	// Missing are the objects with no row on the chain.
	Missing []int64
}

// Has reports whether the change touched an object of one of types.
func (t Touch) Has(types ...int64) bool {
	return slices.ContainsFunc(t.Types, func(x int64) bool { return slices.Contains(types, x) })
}

// ChangeChain is the chain a change event of branch is looked up on: the
// tree's chain of branch, or, when it is broken (the branch was deleted
// since), branch and the default branch.
func ChangeChain(tree model.BranchTree, branch int64) []int64 {
	if c, err := tree.Chain(branch); err == nil && len(c) > 0 {
		return c
	}
	if branch == BranchDefault {
		return []int64{BranchDefault}
	}
	return []int64{branch, BranchDefault}
}

// TouchOf is the Touch of ev from rows, the rows of its objects on chain
// (ChangeChain) however they were read: the store (Touched) or the index.
// Rows of other branches or objects are ignored.
func TouchOf(ev changes.Event, chain []int64, rows []store.Object) Touch {
	t := Touch{Chain: chain, Objects: slices.Compact(slices.Sorted(slices.Values(ev.ObjectIDs)))}
	c := model.NewChain(chain)
	rank := func(o store.Object) int { return slices.Index(chain, o.Branch) }
	rows = slices.DeleteFunc(slices.Clone(rows), func(o store.Object) bool {
		_, ok := slices.BinarySearch(t.Objects, o.ID)
		return !ok || !c.Contains(o.Branch)
	})
	slices.SortStableFunc(rows, func(a, b store.Object) int { return rank(a) - rank(b) })
	t.Effective = c.EffectiveObjects(rows)
	for _, o := range rows {
		t.Types = appendNew(t.Types, o.TypeID)
		if o.APIIdentifier != "" {
			t.APIIdentifiers = appendNew(t.APIIdentifiers, o.APIIdentifier)
		}
		if o.GUID != "" {
			t.GUIDs = appendNew(t.GUIDs, o.GUID)
		}
	}
	for _, id := range t.Objects {
		if _, ok := t.Effective[id]; !ok {
			t.Missing = append(t.Missing, id)
		}
	}
	return t
}

func appendNew[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// Touched reads the Touch of ev from r: the branch tree, then every row of
// the event's objects on the chain, in one query whatever the number of
// objects (three reads per event; one on the default branch, whose chain
// is itself).
func Touched(ctx context.Context, r store.Reader, ev changes.Event) (Touch, error) {
	if len(ev.ObjectIDs) == 0 {
		return TouchOf(ev, nil, nil), nil
	}
	chain := []int64{BranchDefault}
	if ev.Branch != BranchDefault {
		tree, _, err := ReadBranchTree(ctx, r)
		if err != nil {
			return Touch{}, err
		}
		chain = ChangeChain(tree, ev.Branch)
	}
	rows, err := r.GetObjectsIn(ctx, chain, ev.ObjectIDs)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Touch{}, fmt.Errorf("content: read the changed objects: %w", err)
	}
	return TouchOf(ev, chain, rows), nil
}
