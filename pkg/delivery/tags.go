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
	"github.com/cmsplatform/cms/pkg/model"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
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
func ObjTag(branch, id int64) string {
	var b [48]byte
	return string(strconv.AppendInt(append(strconv.AppendInt(append(b[:0], "obj:"...), branch, 10), ':'), id, 10))
}

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
	ctx, b, err := s.branchID(ctx, r.Branch)
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
	_, b, err := s.branchID(ctx, branch)
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
// once the index shows the event (WaitForVersion(ev.Transaction)): what
// the change touched (content.TouchOf: the changed objects' types and
// ApiIdentifiers along the event's branch chain) and the branch tree are
// read from the index, in two requests whatever the number of objects (up
// to search.MaxResultWindow documents of them on the chain per request).
// The event's branch and every descendant (which inherit its objects) are
// affected. Objects on no branch of the chain in the index (purged, or
// not visible on the branch; soft-deleted objects stay, flagged) have
// an unknown type, so they evict the branch's model tag and every typed
// list: safe, not precise.
func (s *Service) ChangeTags(ctx context.Context, ev changes.Event) ([]string, error) {
	tree, err := s.branches.Tree(ctx)
	if err != nil {
		return nil, err
	}
	branches := subtreeOf(tree, ev.Branch)
	if ev.Kind == changes.KindBranchDeleted {
		// The branch is gone from the index: evict it and the branch list.
		tags := []string{ModelTag(ev.Branch), BranchesTag}
		for _, b := range branches {
			tags = append(tags, ModelTag(b))
		}
		return tags, nil
	}
	touch, err := s.touched(ctx, tree, ev)
	if err != nil {
		return nil, err
	}
	unknown := len(touch.Missing) > 0
	meta := unknown || slices.ContainsFunc(touch.Types, func(t int64) bool { return modelTypes[t] })
	var tags []string
	for _, id := range touch.Objects {
		if o, ok := touch.Effective[id]; ok && o.TypeID == content.TypeBranch {
			tags = append(tags, BranchesTag)
			for _, b := range subtreeOf(tree, id) {
				tags = append(tags, ModelTag(b))
			}
		}
	}
	for _, b := range branches {
		tags = append(tags, ListTag(b))
		if meta {
			tags = append(tags, ModelTag(b))
		}
		if unknown {
			tags = append(tags, AnyTypeListTag(b))
		}
		for _, t := range touch.Types {
			tags = append(tags, TypeListTag(b, t))
		}
		for _, id := range touch.Objects {
			tags = append(tags, ObjTag(b, id))
		}
		for _, api := range touch.APIIdentifiers {
			tags = append(tags, APITag(b, api))
		}
	}
	return tags, nil
}

// EarlyEvictObjects is how many objects a change event has at least for
// EarlyChangeTags to name tags.
const EarlyEvictObjects = 500

// EarlyChangeTags returns the tags the response cache evicts as soon as it
// receives ev, before the index shows it (tagcache.Invalidator.Early): for
// a change of EarlyEvictObjects objects or more, the query-shaped answers
// (ListTag, AnyTypeListTag) of its branch and the branches below. Such a
// change (a promote, a release, an import) is searchable on its branch
// before the index records its version (the indexer writes the branch's
// documents first, then its descendants'); until then these answers are
// built from the index on every read instead of being served from the
// cache, so lists and counts show the change as soon as the index does,
// and all of it (the index shows a pass's documents of a branch at once).
// Single-object answers wait for ChangeTags, as for every change.
func (s *Service) EarlyChangeTags(ctx context.Context, ev changes.Event) ([]string, error) {
	if len(ev.ObjectIDs) < EarlyEvictObjects || ev.Kind == changes.KindComment || ev.Kind == changes.KindBranchDeleted {
		return nil, nil
	}
	tree, err := s.branches.Tree(ctx)
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, b := range subtreeOf(tree, ev.Branch) {
		tags = append(tags, ListTag(b), AnyTypeListTag(b))
	}
	return tags, nil
}

// touched is the content.Touch of ev as the index shows it: the indexed
// documents of its objects on every branch of its chain.
func (s *Service) touched(ctx context.Context, tree model.BranchTree, ev changes.Event) (content.Touch, error) {
	chain := content.ChangeChain(tree, ev.Branch)
	ids := slices.Compact(slices.Sorted(slices.Values(ev.ObjectIDs)))
	if len(ids) == 0 {
		return content.TouchOf(ev, chain, nil), nil
	}
	docs := make(map[string]int64, len(chain)*len(ids))
	docIDs := make([]string, 0, len(chain)*len(ids))
	for _, b := range chain {
		for _, id := range ids {
			docs[indexdoc.DocID(b, id)] = b
			docIDs = append(docIDs, indexdoc.DocID(b, id))
		}
	}
	var rows []store.Object
	// One request, or one per search.MaxResultWindow documents of a huge
	// event on a deep branch.
	for part := range slices.Chunk(docIDs, search.MaxResultWindow) {
		res, err := s.eng.Search(ctx, search.SearchRequest{Index: s.objects, Query: search.IDs(part), Size: len(part), Fields: []string{indexdoc.FieldSource}})
		if err != nil && !errors.Is(err, search.ErrIndexNotFound) {
			return content.Touch{}, fmt.Errorf("delivery: read changed objects: %w", err)
		}
		for _, h := range res.Hits {
			if src, err := indexdoc.DecodeSource(h.Fields); err == nil {
				rows = append(rows, store.Object{ID: src.ID, Branch: docs[h.ID], TypeID: src.TypeRef, GUID: src.GUID,
					APIIdentifier: src.APIIdentifier, Deleted: src.Deleted})
			}
		}
	}
	return content.TouchOf(ev, chain, rows), nil
}

// subtreeOf is branch and its descendants in tree; a branch not in the
// index (yet, or any more) still yields itself.
func subtreeOf(tree model.BranchTree, branch int64) []int64 {
	if sub := tree.Subtree(branch); len(sub) > 0 {
		return sub
	}
	return []int64{branch}
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

// IsParked reports whether the indexer parked transaction tx (its
// version is recorded, its changes are not in the index):
// indexdoc.ChangeTracking.IsParked.
func (s *Service) IsParked(ctx context.Context, tx int64) (bool, error) {
	return s.tracking.IsParked(ctx, tx)
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
