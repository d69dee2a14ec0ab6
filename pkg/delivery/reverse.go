package delivery

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// # Reverse references (resolveReverse)
//
// resolveReverse names reference attributes (ObjRef, BinRef; unknown names
// and other attributes are ignored). Level 0 is the response's roots and
// the objects forward resolution added; level n+1 is the objects that
// refer, through one of the named attributes, to an object of level n and
// are not in the response yet. Levels are resolved up to
// resolveReverseDepth (default DefaultResolveDepth; <= 0 = none), each
// with ONE search over the branch (more only when a level needs more than
// maxTermsPerSearch index terms), and the objects found go into refs (flat,
// de-duplicated, sorted by id within a level, capped by MaxRefs, users and
// deleted objects left out as in forward resolution).
//
// "Refers" follows the request's chains, like the props a response shows:
// object X refers to Y through attribute A when the values of A that the
// request's language and variant chains select on X (what X's props show
// for A) contain Y. The search matches the index's FieldValues terms of A
// for every (language, variant) of the chains; the selection is then
// checked on the stored source.
//
// Every object that was looked up (levels 0 to depth-1: the roots, the
// forward refs and the reverse refs whose own referrers were searched)
// gets Object.Reverse: for each named attribute (all of them, an empty
// list when none), the ids of the visible objects referring to it, sorted.
// These ids include referrers that did not fit in refs (MaxRefs), as
// props list reference ids whether or not they are resolved. Objects of
// the last level, the unit objects and the refs of a response without
// resolveReverse have Reverse nil (omitted). A level with more than
// search.MaxResultWindow matching documents is truncated (logged).

// maxTermsPerSearch bounds the terms of one search (Elasticsearch's
// default index.max_terms_count is 65536).
const maxTermsPerSearch = 60000

// revAttr is one attribute named in resolveReverse.
type revAttr struct {
	id  int64
	api string
}

// reverseAttrs maps the resolveReverse parameter to reference attributes;
// unknown names and non-reference attributes are ignored.
func (sc *scope) reverseAttrs(param string) []revAttr {
	var out []revAttr
	for _, id := range sc.resolveAttrs(param) {
		if a := sc.m.attrs[id]; a != nil && a.api != "" {
			out = append(out, revAttr{id: id, api: a.api})
		}
	}
	return out
}

// resolveReverse runs the reverse levels (see the section comment) from
// objs and refs, fills their Reverse in place and returns refs with the
// referring objects appended. seen holds every object of the response and
// gets the new ones.
func (s *Service) resolveReverse(ctx context.Context, sc *scope, objs, refs []Object, seen map[int64]bool, r Request) ([]Object, error) {
	attrs := sc.reverseAttrs(r.ResolveReverse)
	depth, err := resolveDepth(r.ResolveReverseDepth, "resolveReverseDepth")
	if err != nil {
		return nil, err
	}
	if len(attrs) == 0 || depth <= 0 {
		return refs, nil
	}
	rev := map[int64]map[string][]int64{} // looked-up id -> attribute -> referrers
	level := make([]int64, 0, len(objs)+len(refs))
	for _, o := range objs {
		level = append(level, o.Meta.ID)
	}
	for _, o := range refs {
		level = append(level, o.Meta.ID)
	}
	var found []indexdoc.Source // referring objects added to refs
	for d := 0; d < depth && len(level) > 0; d++ {
		for _, id := range level {
			m := make(map[string][]int64, len(attrs))
			for _, a := range attrs {
				m[a.api] = []int64{}
			}
			rev[id] = m
		}
		hits, err := s.referrers(ctx, sc, level, attrs, r.Deleted)
		if err != nil {
			return nil, err
		}
		inLevel := make(map[int64]bool, len(level))
		for _, id := range level {
			inLevel[id] = true
		}
		var next []int64
		for _, src := range hits {
			refers := false
			for _, a := range attrs {
				for _, target := range sc.view.refTargets(src, []int64{a.id}) {
					if inLevel[target] {
						rev[target][a.api] = append(rev[target][a.api], src.ID)
						refers = true
					}
				}
			}
			if !refers || seen[src.ID] || len(refs)+len(found) >= MaxRefs {
				continue
			}
			seen[src.ID] = true
			found = append(found, src)
			next = append(next, src.ID)
		}
		level = next
	}
	for _, m := range rev {
		for api, ids := range m {
			slices.Sort(ids)
			m[api] = slices.Compact(ids)
		}
	}
	for i := range objs {
		objs[i].setReverse(rev[objs[i].Meta.ID])
	}
	for i := range refs {
		refs[i].setReverse(rev[refs[i].Meta.ID])
	}
	for _, src := range found {
		refs = append(refs, sc.view.renderWith(src, rev[src.ID]))
	}
	return refs, nil
}

// referrers returns the visible objects of the branch that hold one of
// ids in one of attrs, for any (language, variant) of the request's
// chains, sorted by id: one search (see maxTermsPerSearch).
func (s *Service) referrers(ctx context.Context, sc *scope, ids []int64, attrs []revAttr, deleted bool) ([]indexdoc.Source, error) {
	var terms []any
	var out []indexdoc.Source
	flush := func() error {
		if len(terms) == 0 {
			return nil
		}
		req, hits := s.sourceSearch(search.SearchRequest{Index: s.objects, Size: search.MaxResultWindow,
			Sort: []search.SortField{{Field: indexdoc.FieldID}},
			Query: search.And{search.Term{Field: indexdoc.FieldBranch, Value: sc.branch},
				search.Terms{Field: indexdoc.FieldValues, Values: terms}}})
		res, err := s.eng.Search(ctx, req)
		terms = terms[:0]
		if err != nil {
			return s.searchErr(err)
		}
		if res.Total > int64(len(res.Hits)) {
			s.log.Warn("delivery: reverse references truncated", "branch", sc.branch, "total", res.Total, "read", len(res.Hits))
		}
		for _, h := range res.Hits {
			src, err := hits.source(h)
			if err != nil {
				return fmt.Errorf("delivery: %s: %w", h.ID, err)
			}
			if visible(src, deleted) {
				out = append(out, src)
			}
		}
		return nil
	}
	for _, id := range ids {
		v := strconv.FormatInt(id, 10)
		for _, a := range attrs {
			for _, l := range sc.view.langs {
				for _, va := range sc.view.variants {
					terms = append(terms, indexdoc.ValueTerm(a.id, l, va, v))
				}
			}
		}
		if len(terms) >= maxTermsPerSearch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b indexdoc.Source) int { return cmp.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b indexdoc.Source) bool { return a.ID == b.ID }), nil
}

// setReverse sets o's reverse relations (nil: none looked up) and renews
// its ETag, which covers them.
func (o *Object) setReverse(rev map[string][]int64) {
	if rev == nil && o.Reverse == nil {
		return
	}
	o.Reverse = rev
	o.Meta.ETag = etagOf(*o)
}
