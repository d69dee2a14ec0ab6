package model

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/store"
)

// Errors of a broken branch chain.
var (
	// ErrNoBranch: the chain reaches an id that is no live branch.
	ErrNoBranch = errors.New("model: no such branch")
	// ErrBranchCycle: the chain reaches a branch it already passed.
	ErrBranchCycle = errors.New("model: branch parent cycle")
)

// BrokenChainError is a chain that does not reach the default branch: At
// (reached from Branch) is no live branch, or starts a cycle. It wraps
// ErrNoBranch or ErrBranchCycle.
type BrokenChainError struct {
	Branch, At int64
	Cycle      bool
}

func (e *BrokenChainError) Error() string {
	if e.Cycle {
		return fmt.Sprintf("branch %d: parent cycle at %d", e.Branch, e.At)
	}
	return fmt.Sprintf("branch %d: %d is no branch", e.Branch, e.At)
}

// Unwrap returns ErrBranchCycle or ErrNoBranch.
func (e *BrokenChainError) Unwrap() error {
	if e.Cycle {
		return ErrBranchCycle
	}
	return ErrNoBranch
}

// BranchTree is the branch tree: every live branch object with its parent.
type BranchTree struct {
	parent   map[int64]int64 // branch → parent (0 for the default branch)
	children map[int64][]int64
}

// NewBranchTree builds the tree from the branch objects (type 40, stored on
// BranchDefault) and their AttrBranchParent values (on BranchDefault):
// deleted objects are no branches, the default branch has no parent, and a
// parent value that is no number is no parent.
func NewBranchTree(objs []store.Object, parents []store.Value) BranchTree {
	t := BranchTree{parent: make(map[int64]int64, len(objs)), children: map[int64][]int64{}}
	for _, o := range objs {
		if !o.Deleted {
			t.parent[o.ID] = 0
		}
	}
	for _, v := range parents {
		if _, ok := t.parent[v.ObjectID]; !ok || v.ObjectID == BranchDefault || v.AttributeID != AttrBranchParent {
			continue
		}
		if p, err := strconv.ParseInt(string(bytes.TrimSpace(v.JSON)), 10, 64); err == nil {
			t.parent[v.ObjectID] = p
		}
	}
	for b, p := range t.parent {
		if b != BranchDefault {
			t.children[p] = append(t.children[p], b)
		}
	}
	for _, c := range t.children {
		slices.Sort(c)
	}
	return t
}

// Has reports whether b is a live branch.
func (t BranchTree) Has(b int64) bool { _, ok := t.parent[b]; return ok }

// Parent returns the parent of branch b (0 for the default branch or a
// branch without one).
func (t BranchTree) Parent(b int64) int64 { return t.parent[b] }

// Branches returns every live branch in id order.
func (t BranchTree) Branches() []int64 {
	out := make([]int64, 0, len(t.parent))
	for b := range t.parent {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// Children returns the branches whose parent is b, in id order.
func (t BranchTree) Children(b int64) []int64 { return t.children[b] }

// Chain returns b, its parent, … up to the default branch. A broken chain
// (b or an ancestor is no live branch, or a cycle) is a *BrokenChainError,
// returned with the chain walked so far.
func (t BranchTree) Chain(b int64) ([]int64, error) {
	return WalkChain(b, func(id int64) (int64, bool, error) {
		p, ok := t.parent[id]
		return p, ok, nil
	})
}

// Subtree returns b and all its descendants, parents before children.
func (t BranchTree) Subtree(b int64) []int64 {
	if !t.Has(b) {
		return nil
	}
	out := []int64{b}
	for i := 0; i < len(out); i++ {
		for _, c := range t.children[out[i]] {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// WalkChain is the branch chain rule for readers that look parents up one
// at a time (the index): starting at b, parent returns a branch's parent
// and whether the branch exists. The chain ends at the default branch or
// broken (see BranchTree.Chain: a parent 0 is no branch); the chain walked
// so far is returned with any error.
func WalkChain(b int64, parent func(branch int64) (int64, bool, error)) ([]int64, error) {
	var out []int64
	for cur := b; ; {
		if slices.Contains(out, cur) {
			return out, &BrokenChainError{Branch: b, At: cur, Cycle: true}
		}
		p, ok, err := parent(cur)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, &BrokenChainError{Branch: b, At: cur}
		}
		out = append(out, cur)
		if cur == BranchDefault {
			return out, nil
		}
		cur = p
	}
}
