package delivery

import (
	"context"
	"maps"
	"slices"

	"github.com/cmsplatform/cms/pkg/indexdoc"
)

// # Units (resolveUnits)
//
// A value may carry a unit (NovaDB CmsValue.unitRef: the id of an object
// of type 30 typeUnit, kept in indexdoc.SourceValue.Unit). Without
// resolveUnits the output ignores units entirely (as before). With
// resolveUnits=true (inferred semantics, NovaDB documents only the flag):
//
//   - a prop value that has a unit is rendered as
//     {"value": <the scalar as without units>, "unitRef": <unit id>}; a
//     multi-valued attribute is an array of those (values of it without a
//     unit stay bare scalars); values without a unit are unchanged;
//   - the unit objects of every value so rendered, in the roots and in
//     every ref, go into refs: flat, de-duplicated with everything else,
//     in order of first use (roots and refs in order, each by attribute
//     ApiIdentifier), with one multi-get for all of them, after
//     forward and reverse resolution, capped by MaxRefs. Unit objects are
//     not resolved any further (their own references stay ids).
//
// A single-object response depends on its unit objects: their ids are
// among the ids asked (ObjTag).

// withUnit is the rendering of value e with unit.
func withUnit(e any, unit int64) any { return map[string]any{"value": e, "unitRef": unit} }

// unitRefs appends to out the unit ids of o's props (as rendered with
// units), by attribute ApiIdentifier, then value order.
func unitRefs(o Object, out []int64) []int64 {
	add := func(v any) {
		if m, ok := v.(map[string]any); ok {
			if u, ok := m["unitRef"].(int64); ok {
				out = append(out, u)
			}
		}
	}
	for _, api := range slices.Sorted(maps.Keys(o.Props)) {
		v := o.Props[api]
		if list, ok := v.([]any); ok {
			for _, x := range list {
				add(x)
			}
			continue
		}
		add(v)
	}
	return out
}

// resolveUnits appends the unit objects of objs and refs to refs (see the
// section comment) and their ids to asked. seen holds every object of the
// response.
func (s *Service) resolveUnits(ctx context.Context, sc *scope, objs, refs []Object, asked []int64, seen map[int64]bool, deleted bool) ([]Object, []int64, error) {
	if !sc.view.units {
		return refs, asked, nil
	}
	var docIDs []string
	var buf []int64
	for _, group := range [][]Object{objs, refs} {
		for _, o := range group {
			buf = unitRefs(o, buf[:0])
			for _, id := range buf {
				if !seen[id] && len(refs)+len(docIDs) < MaxRefs {
					seen[id] = true
					asked = append(asked, id)
					docIDs = append(docIDs, indexdoc.DocID(sc.branch, id))
				}
			}
		}
	}
	srcs, err := s.multiGet(ctx, sc, docIDs, deleted)
	if err != nil {
		return nil, nil, err
	}
	for _, src := range srcs {
		refs = append(refs, sc.view.render(src))
	}
	return refs, asked, nil
}
