package model

import (
	"bytes"

	"github.com/cmsplatform/cms/pkg/store"
)

// Chain orders the branches of a branch chain for inheritance: a row of a
// branch nearer to the chain's first branch hides the rows of the same
// object (or value group) on branches further up.
type Chain struct {
	branches []int64
	rank     map[int64]int
}

// NewChain returns the inheritance order of chain (the branch first, the
// default branch last; BranchTree.Chain).
func NewChain(chain []int64) Chain {
	c := Chain{branches: chain, rank: make(map[int64]int, len(chain))}
	for i, b := range chain {
		c.rank[b] = i
	}
	return c
}

// Branches returns the chain, the branch first.
func (c Chain) Branches() []int64 { return c.branches }

// Contains reports whether branch b is on the chain.
func (c Chain) Contains(b int64) bool { _, ok := c.rank[b]; return ok }

// Nearer reports whether a row on branch a hides one on branch b.
func (c Chain) Nearer(a, b int64) bool { return c.rank[a] < c.rank[b] }

// EffectiveObjects returns the row that wins per object id: the one of the
// nearest branch of the chain.
func (c Chain) EffectiveObjects(rows []store.Object) map[int64]store.Object {
	out := make(map[int64]store.Object, len(rows))
	for _, o := range rows {
		cur, ok := out[o.ID]
		if !ok || c.Nearer(o.Branch, cur.Branch) {
			out[o.ID] = o
		}
	}
	return out
}

// SameValueGroup reports whether two value rows belong to one value group:
// (object, attribute, language, variant). Inheritance replaces groups
// whole: a group stored on a nearer branch hides the group further up, a
// null row there removes it.
func SameValueGroup(a, b store.Value) bool {
	return a.ObjectID == b.ObjectID && a.AttributeID == b.AttributeID && a.Variant == b.Variant && a.Language == b.Language
}

// EachValueGroup calls fn with each value group of rows (value rows of the
// chain's branches, ordered so that a group's rows are adjacent, as the
// store's chain reads return them) and the branch whose rows win: the
// nearest one storing the group. The group's rows of that branch, nulls
// dropped, are its effective values.
func (c Chain) EachValueGroup(rows []store.Value, fn func(group []store.Value, winner int64)) {
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && SameValueGroup(rows[start], rows[end]) {
			end++
		}
		group := rows[start:end]
		best := group[0].Branch
		for _, r := range group {
			if c.Nearer(r.Branch, best) {
				best = r.Branch
			}
		}
		fn(group, best)
		start = end
	}
}

// IsNull reports whether a stored JSON value is null: on a nearer branch
// it removes the inherited value group.
func IsNull(j []byte) bool { return bytes.Equal(bytes.TrimSpace(j), []byte("null")) }
