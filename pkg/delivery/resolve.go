package delivery

import (
	"context"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexing"
	"github.com/cmsplatform/cms/pkg/search"
)

// resolve loads the targets of the reference attributes named in
// r.Resolve, transitively up to the resolve depth: one multi-get per
// level. Refs are flat, de-duplicated, in discovery order, never repeat a
// root, skip targets that are not published (not in the index) and stop at
// MaxRefs. asked are the ids it looked up, published or not (a single
// object's response depends on exactly these).
func (s *Service) resolve(ctx context.Context, sc *scope, roots []indexing.Source, r Request) (refs []Object, asked []int64, err error) {
	attrs := sc.resolveAttrs(r.Resolve)
	depth := DefaultResolveDepth
	if r.ResolveDepth != nil {
		depth = int(*r.ResolveDepth)
	}
	if len(attrs) == 0 || depth <= 0 || len(roots) == 0 {
		return nil, nil, nil
	}
	seen := make(map[int64]bool, len(roots))
	for _, src := range roots {
		seen[src.ID] = true
	}
	level := roots
	for d := 0; d < depth && len(level) > 0 && len(refs) < MaxRefs; d++ {
		var ids []string
		for _, src := range level {
			for _, id := range sc.view.refTargets(src, attrs) {
				if !seen[id] && len(refs)+len(ids) < MaxRefs {
					seen[id] = true
					asked = append(asked, id)
					ids = append(ids, indexing.DocID(sc.branch, id))
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
		for _, src := range next {
			refs = append(refs, sc.view.render(src))
		}
		level = next
	}
	if len(refs) >= MaxRefs {
		s.log.Warn("delivery: refs capped", "branch", sc.branch, "max", MaxRefs)
	}
	return refs, asked, nil
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
		if a == nil || !(a.dataType == "ObjRef" || strings.HasPrefix(a.dataType, "BinRef")) || containsID(out, a.id) {
			continue
		}
		out = append(out, a.id)
	}
	return out
}

// multiGet reads the documents ids (of one branch) in one search, keeping
// the order of ids and dropping what is not visible.
func (s *Service) multiGet(ctx context.Context, sc *scope, ids []string, deleted bool) ([]indexing.Source, error) {
	// Only the ids query goes to the engine (negations make engines walk
	// every document); users and deleted objects are dropped here.
	res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: search.IDs(ids), Size: len(ids)})
	if err != nil {
		return nil, s.searchErr(err)
	}
	byID := make(map[string]indexing.Source, len(res.Hits))
	for _, h := range res.Hits {
		src, err := s.hitSource(h)
		if err != nil {
			return nil, fmt.Errorf("delivery: %s: %w", h.ID, err)
		}
		if src.TypeRef == content.TypeUser || src.Deleted && !deleted {
			continue
		}
		byID[h.ID] = src
	}
	out := make([]indexing.Source, 0, len(byID))
	for _, id := range ids {
		if src, ok := byID[id]; ok {
			out = append(out, src)
		}
	}
	return out, nil
}
