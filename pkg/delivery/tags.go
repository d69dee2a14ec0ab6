package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
)

// Cache tags. Every response names what it was built from, so a change
// event evicts exactly the responses it can alter (see ChangeTags):
//
//   - ModelTag(b) is on every response of branch b: the meta-model (types,
//     attributes, languages, forms, branches) shapes every rendering, and
//     its change evicts the whole branch.
//   - ObjTag(b, id) is on a single-object response for the object and for
//     every reference target it asked for (found or not yet published).
//   - APITag(b, api) is on a single-object response looked up by
//     ApiIdentifier, so another object taking that identifier evicts it.
//   - BranchesTag is on the branch list; a changed branch object evicts it
//     and, as its parent may have changed, every answer of the branch and
//     its descendants.
//   - ListTag(b) is on query-shaped responses (lists, counts, facets,
//     update info): any change of the branch evicts them, except typed
//     lists without resolve, resolveReverse and resolveUnits, which carry
//     TypeListTag(b, type) and AnyTypeListTag(b) instead and are evicted
//     only by changes to objects of that type (or of an unknown type).
//     A single-object response with resolveReverse carries ListTag(b) as
//     well: any object of the branch may start (or stop) referring to it.

// ModelTag is the tag of branch's meta-model (see Cache tags above).
func ModelTag(branch int64) string { return "model:" + strconv.FormatInt(branch, 10) }

// ObjTag is the tag of one object on branch.
func ObjTag(branch, id int64) string { return fmt.Sprintf("obj:%d:%d", branch, id) }

// APITag is the tag of an ApiIdentifier lookup on branch.
func APITag(branch int64, api string) string {
	return fmt.Sprintf("api:%d:%s", branch, strings.ToLower(api))
}

// ListTag is the tag of branch's query-shaped responses.
func ListTag(branch int64) string { return "list:" + strconv.FormatInt(branch, 10) }

// TypeListTag is the tag of branch's plain typed lists of typ.
func TypeListTag(branch, typ int64) string { return fmt.Sprintf("list:%d:%d", branch, typ) }

// AnyTypeListTag is the tag every plain typed list of branch carries.
func AnyTypeListTag(branch int64) string { return fmt.Sprintf("list:%d:*", branch) }

// modelTypes are the object types whose change alters the meta-model.
var modelTypes = map[int64]bool{typeRoot: true, content.TypeAttribute: true, content.TypeLanguage: true,
	content.TypeForm: true}

// BranchesTag is on the branch list (GetBranches).
const BranchesTag = "branches"

// QueryTags returns the cache tags of a query-shaped response for r
// (List, Count, Occurrences, Suggestions, UpdateInfo). It resolves the
// branch and type like the query does; errors are the query's errors.
func (s *Service) QueryTags(ctx context.Context, r Request) ([]string, error) {
	b, err := s.branchID(ctx, r.Branch)
	if UnknownBranch(err) {
		return unknownBranchTags(r.Branch), nil
	}
	if err != nil {
		return nil, err
	}
	if r.Type == "" || r.resolves() {
		return []string{ModelTag(b), ListTag(b)}, nil
	}
	m, err := s.model(ctx, b)
	if err != nil {
		return nil, err
	}
	t, err := m.objType(r.Type)
	if err != nil {
		return nil, err
	}
	return []string{ModelTag(b), TypeListTag(b, t.id), AnyTypeListTag(b)}, nil
}

// ConfigTags returns the cache tags of a configuration response (types,
// languages) of branch.
func (s *Service) ConfigTags(ctx context.Context, branch string) ([]string, error) {
	b, err := s.branchID(ctx, branch)
	if UnknownBranch(err) {
		return unknownBranchTags(branch), nil
	}
	if err != nil {
		return nil, err
	}
	return []string{ModelTag(b)}, nil
}

// singleTags are the tags of a Get: the object, what it asked to resolve
// (forward targets and units), the identifier it was looked up by, and
// with resolveReverse the branch's ListTag.
func singleTags(branch int64, param string, root int64, asked []int64, r Request) []string {
	tags := make([]string, 0, len(asked)+4)
	tags = append(tags, ModelTag(branch), ObjTag(branch, root))
	if strings.TrimSpace(r.ResolveReverse) != "" {
		tags = append(tags, ListTag(branch))
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(param), 10, 64); err != nil {
		tags = append(tags, APITag(branch, strings.TrimSpace(param)))
	}
	for _, id := range asked {
		tags = append(tags, ObjTag(branch, id))
	}
	return tags
}

// ChangeTags returns the tags a change event makes stale. Call it only
// once the index shows the event (WaitForVersion(ev.Transaction)): it
// reads the changed objects' current type and ApiIdentifier, and the
// branch tree, from the index. The event's branch and every descendant
// (which inherit its objects) are affected. Objects no longer in the index
// (deleted) have an unknown type, so they evict the branch's model tag
// and every typed list: safe, not precise.
func (s *Service) ChangeTags(ctx context.Context, ev changes.Event) ([]string, error) {
	branches, err := s.subtree(ctx, ev.Branch)
	if err != nil {
		return nil, err
	}
	if ev.Kind == "branchDeleted" {
		// The branch is gone from the index: evict it and the branch list.
		tags := []string{ModelTag(ev.Branch), BranchesTag}
		for _, b := range branches {
			tags = append(tags, ModelTag(b))
		}
		return tags, nil
	}
	ids := slices.Compact(slices.Sorted(slices.Values(ev.ObjectIDs)))
	found := map[int64]indexdoc.Source{}
	if len(ids) > 0 {
		docIDs := make([]string, len(ids))
		for i, id := range ids {
			docIDs[i] = indexdoc.DocID(ev.Branch, id)
		}
		res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: search.IDs(docIDs), Size: len(docIDs), Fields: sourceOnly()})
		if err != nil && !errors.Is(err, search.ErrIndexNotFound) {
			return nil, fmt.Errorf("delivery: read changed objects: %w", err)
		}
		for _, h := range res.Hits {
			if src, err := indexdoc.DecodeSource(h.Fields); err == nil {
				found[src.ID] = src
			}
		}
	}
	model, unknown := false, false
	types := map[int64]bool{}
	for _, id := range ids {
		src, ok := found[id]
		switch {
		case !ok:
			unknown, model = true, true
		case modelTypes[src.TypeRef]:
			model = true
		}
		if ok {
			types[src.TypeRef] = true
		}
	}
	var tags []string
	for _, src := range found {
		if src.TypeRef != content.TypeBranch {
			continue
		}
		sub, err := s.subtree(ctx, src.ID)
		if err != nil {
			return nil, err
		}
		tags = append(tags, BranchesTag)
		for _, b := range sub {
			tags = append(tags, ModelTag(b))
		}
	}
	for _, b := range branches {
		tags = append(tags, ListTag(b))
		if model {
			tags = append(tags, ModelTag(b))
		}
		if unknown {
			tags = append(tags, AnyTypeListTag(b))
		}
		for t := range types {
			tags = append(tags, TypeListTag(b, t))
		}
		for _, id := range ids {
			tags = append(tags, ObjTag(b, id))
			if src, ok := found[id]; ok && src.APIIdentifier != "" {
				tags = append(tags, APITag(b, src.APIIdentifier))
			}
		}
	}
	return tags, nil
}

// subtree returns branch and its descendants, read from the indexed
// branch objects (type 40 on branch 4, parent in attribute 4000). A branch
// not in the index (yet, or any more) still yields itself.
func (s *Service) subtree(ctx context.Context, branch int64) ([]int64, error) {
	children := map[int64][]int64{}
	err := s.scan(ctx, search.And{search.Term{Field: indexdoc.FieldBranch, Value: content.BranchDefault},
		search.Term{Field: indexdoc.FieldTypeRef, Value: content.TypeBranch}}, func(src indexdoc.Source) {
		for _, v := range src.Values {
			if v.Attr == content.AttrBranchParent {
				if p, ok := refOf(v.Value); ok && p != src.ID {
					children[p] = append(children[p], src.ID)
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := []int64{branch}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// ErrVersionTimeout means WaitForVersion gave up before the index showed the
// version.
var ErrVersionTimeout = errors.New("delivery: change version not visible in time")

// waitPoll is how often WaitForVersion reads the index version.
const waitPoll = 10 * time.Millisecond

// WaitForVersion waits until the index's change-tracking version is at
// least minVersion (read-your-writes), for at most maxWait: the one wait
// of the index readers, indexdoc.ChangeTracking.WaitForVersion. It returns
// the version seen last; on timeout the error wraps ErrVersionTimeout.
func (s *Service) WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	v, err := s.tracking.WaitForVersion(ctx, minVersion, maxWait)
	if errors.Is(err, indexdoc.ErrWaitTimeout) {
		return v, fmt.Errorf("%w: want %d, index at %d", ErrVersionTimeout, minVersion, v)
	}
	return v, err
}

// WaitForVisible is WaitForVersion for read-your-writes: once the index
// shows minVersion it also fails with an *indexdoc.ParkedError naming the
// oldest parked transaction up to minVersion, whose changes the index
// lacks (indexdoc.ChangeTracking.WaitForVisible).
func (s *Service) WaitForVisible(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	v, err := s.WaitForVersion(ctx, minVersion, maxWait)
	if err != nil {
		return v, err
	}
	return v, s.tracking.CheckVisible(ctx, minVersion)
}
