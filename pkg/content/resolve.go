package content

import (
	"context"
	"fmt"
)

// resolve maps identifiers to object ids on the view in at most two
// queries (ids, then GUIDs and ApiIdentifiers), keeping the input order.
// An unknown identifier is ErrNotFound, one matching two objects
// ErrAmbiguous, a malformed one ErrInvalid. "0" and "root" are the root.
func (v view) resolve(ctx context.Context, idents []string) ([]int64, error) {
	return v.resolveSome(ctx, idents, false)
}

// missingID is what resolveSome resolves an identifier to that names no
// object (0 is the virtual root).
const missingID = -1

// resolveSome is resolve; with skipMissing an identifier that names no
// object resolves to missingID instead of failing.
func (v view) resolveSome(ctx context.Context, idents []string, skipMissing bool) ([]int64, error) {
	parsed := make([]Ident, len(idents))
	var nums []int64
	var guids, apis []string
	for i, s := range idents {
		id, err := ParseIdent(s)
		if err != nil {
			return nil, err
		}
		parsed[i] = id
		switch id.Kind {
		case IdentID:
			nums = append(nums, id.ID)
		case IdentGUID:
			guids = append(guids, id.GUID)
			apis = append(apis, id.Raw)
		default:
			apis = append(apis, id.Raw)
		}
	}
	var byID map[int64]bool
	if len(nums) > 0 {
		objs, err := v.objects(ctx, nums)
		if err != nil {
			return nil, err
		}
		byID = make(map[int64]bool, len(objs))
		for id := range objs {
			byID[id] = true
		}
	}
	matches := map[string]map[int64]bool{} // identifier → ids
	if len(apis) > 0 {
		rows, err := v.r.FindObjectsIn(ctx, v.chain, guids, apis)
		if err != nil {
			return nil, err
		}
		add := func(key string, id int64) {
			if matches[key] == nil {
				matches[key] = map[int64]bool{}
			}
			matches[key][id] = true
		}
		for _, o := range v.pick(rows) {
			add("g:"+o.GUID, o.ID)
			if o.APIIdentifier != "" {
				add("a:"+o.APIIdentifier, o.ID)
			}
		}
	}
	out := make([]int64, len(parsed))
	for i, id := range parsed {
		switch {
		case id.Kind == IdentID:
			if !byID[id.ID] && skipMissing {
				out[i] = missingID
				continue
			}
			if !byID[id.ID] {
				return nil, notFoundf("object %d on branch %d", id.ID, v.branch)
			}
			out[i] = id.ID
			continue
		case id.Raw == "root":
			out[i] = RootID
			continue
		}
		hits := map[int64]bool{}
		for k := range matches["a:"+id.Raw] {
			hits[k] = true
		}
		if id.Kind == IdentGUID {
			for k := range matches["g:"+id.GUID] {
				hits[k] = true
			}
		}
		switch len(hits) {
		case 0:
			if skipMissing {
				out[i] = missingID
				continue
			}
			return nil, notFoundf("object %q on branch %d", id.Raw, v.branch)
		case 1:
			for k := range hits {
				out[i] = k
			}
		default:
			return nil, fmt.Errorf("%w: %q matches %d objects", ErrAmbiguous, id.Raw, len(hits))
		}
	}
	return out, nil
}
