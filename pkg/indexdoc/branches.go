package indexdoc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Errors of Branches, by kind (errkind): the caller maps them to 404 and
// 400.
var (
	// ErrNoBranch is a branch identifier the index knows no branch for.
	ErrNoBranch = errkind.New(errkind.NotFound, "indexdoc: no such branch")
	// ErrBadBranch is a branch parameter that cannot be an identifier
	// ("4.0", "+4", "").
	ErrBadBranch = errkind.New(errkind.Invalid, "indexdoc: invalid branch")
)

// Branches reads the branch objects the writer indexed (type 40 on the
// default branch, their parent in attribute 4000): the branch tree as the
// index shows it, for the readers that check read grants against it
// (pkg/auth.Principal.Allowed). Like ChangeTracking it needs the engine
// only, and it is safe for concurrent use.
type Branches struct {
	eng     search.Engine
	objects string
}

// NewBranches reads the objects index named with prefix (the writer's
// index prefix) on eng.
func NewBranches(eng search.Engine, prefix string) Branches {
	return Branches{eng: eng, objects: prefix + ObjectsIndex}
}

// ID resolves a branch identifier (an id, or the ApiIdentifier of one
// live branch) to the branch's id. A parameter that matches no branch
// object and is an alias (params.BranchAlias, "draft") is the branch it
// stands for, so a branch that takes the ApiIdentifier "draft" wins.
func (b Branches) ID(ctx context.Context, param string) (int64, error) {
	ident, err := content.ParseIdent(param)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrBadBranch, strings.TrimPrefix(err.Error(), content.ErrInvalid.Error()+": "))
	}
	if id := ident.ID; ident.Kind == content.IdentID {
		doc, err := b.eng.Get(ctx, b.objects, DocID(content.BranchDefault, id))
		if err == nil && doc.Fields[FieldTypeRef] == content.TypeBranch {
			return id, nil
		}
		if err != nil && !errors.Is(err, search.ErrNotFound) && !errors.Is(err, search.ErrIndexNotFound) {
			return 0, fmt.Errorf("indexdoc: read branch: %w", err)
		}
		return 0, fmt.Errorf("%w: %q", ErrNoBranch, param)
	}
	r, err := b.eng.Search(ctx, search.SearchRequest{Index: b.objects, Size: 2, Query: search.And{
		search.Term{Field: FieldBranch, Value: content.BranchDefault},
		search.Term{Field: FieldTypeRef, Value: content.TypeBranch},
		search.Term{Field: FieldAPIIdentifier, Value: param}}})
	if err != nil && !errors.Is(err, search.ErrIndexNotFound) {
		return 0, fmt.Errorf("indexdoc: find branch: %w", err)
	}
	if err != nil || len(r.Hits) == 0 {
		if alias, ok := params.BranchAlias(param); ok {
			return b.ID(ctx, strconv.FormatInt(alias, 10))
		}
		return 0, fmt.Errorf("%w: %q", ErrNoBranch, param)
	}
	if len(r.Hits) != 1 {
		return 0, fmt.Errorf("%w: %q", ErrNoBranch, param)
	}
	id, _ := r.Hits[0].Fields[FieldID].(int64)
	return id, nil
}

// Chain returns the branch named by param (ID) followed by its ancestors
// up to the default branch: the chain read grants are checked against.
func (b Branches) Chain(ctx context.Context, param string) ([]int64, error) {
	id, err := b.ID(ctx, param)
	if err != nil {
		return nil, err
	}
	return chainOf(id, func(cur int64) (int64, bool, error) {
		doc, err := b.eng.Get(ctx, b.objects, DocID(content.BranchDefault, cur))
		if errors.Is(err, search.ErrNotFound) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("indexdoc: read branch %d: %w", cur, err)
		}
		src, err := DecodeSource(doc.Fields)
		if err != nil {
			return 0, false, err
		}
		return BranchParent(src), true, nil
	})
}

// AllChains returns the chain (the branch, then its ancestors) of every
// live indexed branch, for filters that span branches; none before the
// index exists.
func (b Branches) AllChains(ctx context.Context) (map[int64][]int64, error) {
	parents := map[int64]int64{}
	err := b.Scan(ctx, func(src Source) { parents[src.ID] = BranchParent(src) })
	if err != nil {
		return nil, err
	}
	return Chains(parents), nil
}

// Tree is the branch tree as the index shows it (its live branch objects,
// model.NewBranchTree), the default branch always in it.
func (b Branches) Tree(ctx context.Context) (model.BranchTree, error) {
	objs := []store.Object{{ID: content.BranchDefault, Branch: content.BranchDefault, TypeID: content.TypeBranch}}
	var parents []store.Value
	err := b.Scan(ctx, func(src Source) {
		objs = append(objs, store.Object{ID: src.ID, Branch: content.BranchDefault, TypeID: content.TypeBranch})
		if p := BranchParent(src); p != 0 {
			parents = append(parents, store.Value{ObjectID: src.ID, Branch: content.BranchDefault,
				AttributeID: content.AttrBranchParent, JSON: []byte(strconv.FormatInt(p, 10))})
		}
	})
	if err != nil {
		return model.BranchTree{}, err
	}
	return model.NewBranchTree(objs, parents), nil
}

// Scan calls fn with every live branch object of the index, by id; a
// missing index has none.
func (b Branches) Scan(ctx context.Context, fn func(Source)) error {
	return ScanSources(ctx, b.eng, b.objects, search.And{search.Term{Field: FieldBranch, Value: content.BranchDefault},
		search.Term{Field: FieldTypeRef, Value: content.TypeBranch},
		search.Not{Query: search.Term{Field: FieldDeleted, Value: true}}}, fn)
}

// ScanSources calls fn with the source of every document of index that
// matches q, by id, a page at a time; a missing index has none.
func ScanSources(ctx context.Context, eng search.Engine, index string, q search.Query, fn func(Source)) error {
	var after int64 = -1
	const page = 1000
	for {
		r, err := eng.Search(ctx, search.SearchRequest{Index: index,
			Query: search.And{q, search.Range{Field: FieldID, Gt: after}},
			Sort:  []search.SortField{{Field: FieldID}}, Size: page})
		if errors.Is(err, search.ErrIndexNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("indexdoc: scan index: %w", err)
		}
		for _, h := range r.Hits {
			src, err := DecodeSource(h.Fields)
			if err != nil {
				return fmt.Errorf("indexdoc: %s: %w", h.ID, err)
			}
			fn(src)
			after = max(after, src.ID)
		}
		if len(r.Hits) < page {
			return nil
		}
	}
}

// BranchParent is the parent (attribute 4000) of an indexed branch
// object, 0 when none.
func BranchParent(src Source) int64 {
	for _, v := range src.Values {
		if v.Attr == content.AttrBranchParent {
			p, _ := refOf(v.Value)
			return p
		}
	}
	return 0
}

// refOf reads a reference value: a JSON number (or a numeric string).
func refOf(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

// Chains walks parents (branch → parent) into chains (chainOf).
func Chains(parents map[int64]int64) map[int64][]int64 {
	out := make(map[int64][]int64, len(parents))
	for b := range parents {
		out[b], _ = chainOf(b, func(id int64) (int64, bool, error) {
			p, ok := parents[id]
			return p, ok, nil
		})
	}
	return out
}

// chainOf is the chain of branch b (model.WalkChain) as the index shows
// it: parent returns a branch's parent and whether the index has the
// branch. A branch the index lacks ends the chain but is part of it (a
// grant on it still counts), and a broken chain is no error.
func chainOf(b int64, parent func(branch int64) (int64, bool, error)) ([]int64, error) {
	chain, err := model.WalkChain(b, func(id int64) (int64, bool, error) {
		switch id {
		case 0:
			return 0, false, nil
		case content.BranchDefault:
			return 0, true, nil
		}
		p, _, err := parent(id)
		return p, true, err
	})
	if errors.Is(err, model.ErrNoBranch) || errors.Is(err, model.ErrBranchCycle) {
		return chain, nil
	}
	return chain, err
}
