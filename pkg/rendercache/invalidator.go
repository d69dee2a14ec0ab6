package rendercache

import (
	"context"
	"errors"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/tagcache"
)

// Invalidator returns the invalidator of c (tagcache.Invalidator under
// its OutboxFence): it applies change events in stream (= commit) order
// through an ephemeral consumer of this process named with the prefix
// name (every process keeps its own cache and needs every event), reading
// the changed objects' types and identifiers from r. Run starts the fence
// first (retrying while the store is unavailable; the cache serves and
// stores nothing until then) and consumes the events stored since its own
// start minus changes.ClockSkewMargin: every event after the start
// position commits after the fence read it, so it is consumed. A nil
// Cache idles.
func (c *Cache) Invalidator(bus events.Consumer, name string, r store.Reader) *tagcache.Invalidator {
	if c == nil {
		return tagcache.NewInvalidator(nil, nil, nil, bus, name, "render-invalidator")
	}
	tags := func(ctx context.Context, ev changes.Event) ([]string, error) { return ChangeTags(ctx, r, ev) }
	return tagcache.NewInvalidator(c.store, c.fence, tags, bus, name, "render-invalidator").PerProcess(time.Now())
}

// ChangeTags returns the tags ev makes stale: its objects (ObjectTag), and
// their types and identifiers (TypeTag, IdentTag) as stored now on the
// event's branch chain; a deleted branch evicts every render (all carry
// the branch type's tag: the branch tree decides what a render sees).
// Comments change no render.
func ChangeTags(ctx context.Context, r store.Reader, ev changes.Event) ([]string, error) {
	switch ev.Kind {
	case changes.KindComment:
		return nil, nil
	case changes.KindBranchDeleted:
		return []string{TypeTag(content.TypeBranch)}, nil
	}
	if len(ev.ObjectIDs) == 0 {
		return nil, nil
	}
	tags := make([]string, 0, 3*len(ev.ObjectIDs))
	for _, id := range ev.ObjectIDs {
		tags = append(tags, ObjectTag(id))
	}
	chain := []int64{ev.Branch, content.BranchDefault}
	tree, _, err := content.ReadBranchTree(ctx, r)
	if err != nil {
		return nil, err
	}
	if c, err := tree.Chain(ev.Branch); err == nil && len(c) > 0 {
		chain = c
	}
	rows, err := r.GetObjectsIn(ctx, chain, ev.ObjectIDs)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	seen := map[string]bool{}
	for _, o := range rows {
		for _, t := range []string{TypeTag(o.TypeID), IdentTag(o.APIIdentifier), IdentTag(o.GUID)} {
			if t != IdentTag("") && !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
	}
	return tags, nil
}
