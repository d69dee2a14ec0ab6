package content

import (
	"context"
	"fmt"
)

// Precondition makes a write conditional on the current state of the one
// object, branch or comment it changes (HTTP If-Match). The write reads that
// state inside its store transaction and checks it there; write
// transactions are serialised (store.Begin holds the transaction counter
// until Commit), so no other write can come between the check and the
// write: of two clients sending the same precondition, exactly one passes
// and the other gets ErrPreconditionFailed.
//
// The state passed to Match is what a plain read returns: for an object
// GetObject without filters (local values only), for a branch GetBranch
// without filters (inherited values), for a comment GetComment. A write
// whose target does not exist stays ErrNotFound whatever the precondition
// (the answer without it would not have been a success either).
//
// Preconditions apply to single-resource writes only: UpdateObjects and
// DeleteObjects with a precondition must address exactly one object
// (ErrInvalid otherwise), because a list of objects has no one current
// state to compare with.
type Precondition[T any] struct {
	// Match reports whether the current state is the one the client
	// expects (e.g. its ETag is one of the If-Match tags). Nil accepts any
	// state that is not deleted (If-Match: *).
	Match func(current T) bool
}

// check applies p (nil = no precondition) to cur; what names the resource
// in the error.
func (p *Precondition[T]) check(cur T, deleted bool, what string) error {
	switch {
	case p == nil:
		return nil
	case p.Match == nil && deleted:
		return fmt.Errorf("%w: %s is deleted", ErrPreconditionFailed, what)
	case p.Match != nil && !p.Match(cur):
		return fmt.Errorf("%w: %s has changed since it was read (its ETag differs)", ErrPreconditionFailed, what)
	}
	return nil
}

// checkObject applies p to object id as a plain read on v returns it
// (inherited: with inherited values, as branches are read).
func (v view) checkObject(ctx context.Context, p *Precondition[Object], id int64, inherited bool) error {
	if p == nil {
		return nil
	}
	objs, err := v.build(ctx, []int64{id}, projection{inherited: inherited})
	if err != nil {
		return err
	}
	return p.check(objs[0], objs[0].Deleted, fmt.Sprintf("object %d on branch %d", id, v.branch))
}

// singleTarget fails when a precondition is given for a write of n objects.
func singleTarget(p *Precondition[Object], n int) error {
	if p != nil && n != 1 {
		return invalidf("If-Match applies to a single object; this request addresses %d (send one object per request, or no If-Match)", n)
	}
	return nil
}
