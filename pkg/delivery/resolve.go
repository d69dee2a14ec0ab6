package delivery

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/params"
	"github.com/cmsplatform/cms/pkg/search"
)

// resolve completes a response whose root objects are srcs, rendered (in
// the same order) as objs, and returns its refs. It runs three steps, in
// this order:
//
//  1. Forward (resolve, resolveDepth): the targets of the reference
//     attributes named in r.Resolve, transitively, one multi-get per level.
//  2. Reverse (resolveReverse, resolveReverseDepth; reverse.go): starting
//     from the roots and every object step 1 added, the objects referring
//     to them through the attributes named in r.ResolveReverse,
//     transitively, one search per level. Objects found in reverse are not
//     resolved forward. objs and the refs of step 1 get their Reverse
//     filled in place.
//  3. Units (resolveUnits; units.go): the unit objects of every value
//     rendered with a unit, roots and refs of steps 1 and 2, one multi-get.
//
// Refs are flat, de-duplicated, in discovery order, never repeat a root,
// skip targets that are not published (not in the index) or not visible
// (users, deleted objects unless r.Deleted) and stop at MaxRefs. asked are
// the ids of steps 1 and 3 it looked up, published or not (a single
// object's response depends on exactly these; step 2 depends on the whole
// branch, see singleTags).
func (s *Service) resolve(ctx context.Context, sc *scope, roots []indexdoc.Source, objs []Object, r Request) (refs []Object, asked []int64, err error) {
	if len(roots) == 0 {
		return nil, nil, nil
	}
	seen := make(map[int64]bool, len(roots))
	for _, src := range roots {
		seen[src.ID] = true
	}
	if refs, asked, err = s.resolveForward(ctx, sc, roots, seen, r); err != nil {
		return nil, nil, err
	}
	if refs, err = s.resolveReverse(ctx, sc, objs, refs, seen, r); err != nil {
		return nil, nil, err
	}
	if refs, asked, err = s.resolveUnits(ctx, sc, objs, refs, asked, seen, r.Deleted); err != nil {
		return nil, nil, err
	}
	if len(refs) >= MaxRefs {
		s.log.Warn("delivery: refs capped", "branch", sc.branch, "max", MaxRefs)
	}
	return refs, asked, nil
}

// resolveForward loads the targets of the reference attributes named in
// r.Resolve, transitively up to the resolve depth: one multi-get per
// level. seen holds the roots and gets every id looked up.
func (s *Service) resolveForward(ctx context.Context, sc *scope, roots []indexdoc.Source, seen map[int64]bool, r Request) (refs []Object, asked []int64, err error) {
	attrs := sc.resolveAttrs(r.Resolve)
	depth, err := resolveDepth(r.ResolveDepth, "resolveDepth")
	if err != nil {
		return nil, nil, err
	}
	if len(attrs) == 0 || depth <= 0 {
		return nil, nil, nil
	}
	level := roots
	for d := 0; d < depth && len(level) > 0 && len(refs) < MaxRefs; d++ {
		var ids []string
		for _, src := range level {
			for _, id := range sc.view.refTargets(src, attrs) {
				if !seen[id] && len(refs)+len(ids) < MaxRefs {
					seen[id] = true
					asked = append(asked, id)
					ids = append(ids, indexdoc.DocID(sc.branch, id))
				}
			}
		}
		if len(ids) == 0 {
			break
		}
		next, err := s.multiGet(ctx, sc, ids, r.Deleted)
		if err != nil {
			return nil, nil, err
		}
		refs = slices.Grow(refs, len(next))
		for _, src := range next {
			refs = append(refs, sc.view.render(src))
		}
		level = next
	}
	return refs, asked, nil
}

// resolves reports whether r asks for anything beyond its own objects
// (refs or reverse relations): such a response depends on objects of any
// type.
func (r Request) resolves() bool {
	return strings.TrimSpace(r.Resolve) != "" || strings.TrimSpace(r.ResolveReverse) != "" || r.ResolveUnits
}

// resolveAttrs maps the resolve parameter to reference attributes;
// unknown names and non-reference attributes are ignored.
func (sc *scope) resolveAttrs(param string) []int64 {
	var out []int64
	for name := range strings.SplitSeq(param, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		a := sc.m.attribute(name)
		if a == nil || !model.IsReference(a.dataType) || containsID(out, a.id) {
			continue
		}
		out = append(out, a.id)
	}
	return out
}

// multiGet reads the documents ids (of one branch) in one search, keeping
// the order of ids and dropping what is not visible.
func (s *Service) multiGet(ctx context.Context, sc *scope, ids []string, deleted bool) ([]indexdoc.Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// Only the ids query goes to the engine (negations make engines walk
	// every document); users and deleted objects are dropped here.
	req, hits := s.sourceSearch(search.SearchRequest{Index: s.objects, Query: search.IDs(ids), Size: len(ids)})
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return nil, s.searchErr(err)
	}
	found := make([]indexdoc.Source, 0, len(res.Hits))
	// The document ids of found, to put them in the order of ids: looked
	// up in a map for many, scanned for a few (no map to allocate).
	var at map[string]int
	var small [smallGet]string
	foundIDs := small[:0]
	if len(ids) > smallGet {
		at = make(map[string]int, len(res.Hits))
	}
	for _, h := range res.Hits {
		src, err := hits.source(h)
		if err != nil {
			return nil, fmt.Errorf("delivery: %s: %w", h.ID, err)
		}
		if !visible(src, deleted) {
			continue
		}
		if at != nil {
			at[h.ID] = len(found)
		} else {
			foundIDs = append(foundIDs, h.ID)
		}
		found = append(found, src)
	}
	if len(ids) == 1 || len(found) == 0 {
		return found, nil
	}
	out := make([]indexdoc.Source, 0, len(found))
	for _, id := range ids {
		var i int
		var ok bool
		if at != nil {
			i, ok = at[id]
		} else {
			i = slices.Index(foundIDs, id)
			ok = i >= 0
		}
		if ok {
			out = append(out, found[i])
		}
	}
	return out, nil
}

// smallGet is the most ids multiGet orders without a map.
const smallGet = 16

// visible reports whether a resolved object may appear in a response:
// never a user, a deleted object only when deleted ones are asked for.
func visible(src indexdoc.Source, deleted bool) bool {
	return src.TypeRef != content.TypeUser && (!src.Deleted || deleted)
}

// resolveDepth reads a resolve depth parameter by the shared rule
// (params.Depth: 0..params.MaxDepth, nil = DefaultResolveDepth).
func resolveDepth(v *int32, name string) (int, error) {
	d, err := params.Depth(name, v, DefaultResolveDepth, params.MaxDepth)
	if err != nil {
		return 0, invalidf("%v", err)
	}
	return d, nil
}
