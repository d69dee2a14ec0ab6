package rendercache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/store"
)

// startRetry is how long Run waits before it asks an unavailable store
// for its start position again.
const startRetry = time.Second

// Invalidator applies change events to a Cache, in stream (= commit)
// order, through an ephemeral consumer of this process: every process
// keeps its own cache and needs every event.
type Invalidator struct {
	c    *Cache
	bus  events.Consumer
	r    store.Reader
	name string
}

// Invalidator returns the invalidator of c: it consumes change events
// from bus through an ephemeral consumer named with the prefix name and
// reads the changed objects' types and identifiers from r.
func (c *Cache) Invalidator(bus events.Consumer, name string, r store.Reader) *Invalidator {
	return &Invalidator{c: c, bus: bus, r: r, name: name}
}

// Run starts the cache (Start, retrying while the store is unavailable;
// the cache serves and stores nothing until then) and applies change
// events until ctx ends, then returns nil. It consumes the events stored
// since its own start minus changes.ClockSkewMargin: every event after the start
// position commits after Start read it, so it is consumed.
func (iv *Invalidator) Run(ctx context.Context) error {
	if iv.c == nil || iv.bus == nil {
		<-ctx.Done()
		return nil
	}
	log := iv.c.log.With("worker", "render-invalidator")
	since := time.Now().Add(-changes.ClockSkewMargin)
	for {
		err := iv.Start(ctx)
		if err == nil {
			break
		}
		log.WarnContext(ctx, "render cache: start position unavailable; retrying", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(startRetry):
		}
	}
	log.Info("render invalidator consuming (ephemeral, per process)", "name", iv.name, "since", since)
	return iv.consumer().Consume(ctx, iv.bus, iv.name, iv.evict, events.WithEphemeral(), events.WithStartTime(since))
}

// consumer is the invalidator's change-event loop (pkg/changes: malformed
// events dropped with a log line, a failed one retried after a second).
func (iv *Invalidator) consumer() changes.Consumer {
	return changes.Consumer{Name: "render cache", Log: iv.c.log}
}

// Start reads the newest change transaction P and marks it handled: the
// events up to P are reflected in every answer built from now on, and
// Put refuses answers built before P (their lookup read an older one).
// The events after P must reach Handle.
func (iv *Invalidator) Start(ctx context.Context) error {
	p, err := iv.c.fence.LastOutboxTransaction(ctx, changes.SubjectPrefix)
	if err != nil {
		return err
	}
	iv.c.start(p)
	return nil
}

// Handle applies one change event: nil acks it, an error retries it.
func (iv *Invalidator) Handle(ctx context.Context, m events.Msg) error {
	return iv.consumer().Handler(iv.evict)(ctx, m)
}

func (iv *Invalidator) evict(ctx context.Context, ev changes.Event, _ events.Msg) error {
	return iv.Evict(ctx, ev)
}

// Evict removes the answers ev makes stale (fenced at its transaction)
// and marks it handled.
func (iv *Invalidator) Evict(ctx context.Context, ev changes.Event) error {
	c := iv.c
	if c == nil {
		return nil
	}
	tags, err := ChangeTags(ctx, iv.r, ev)
	if err != nil {
		return err
	}
	if len(tags) > 0 {
		err := c.store.InvalidateTagsAt(ctx, ev.Transaction, tags...)
		if err != nil && !errors.Is(err, cache.ErrClosed) {
			return fmt.Errorf("rendercache: invalidate: %w", err)
		}
	}
	c.advance(ev.Transaction)
	c.stats.invalidations.Add(1)
	c.stats.evictedTags.Add(int64(len(tags)))
	return nil
}

// ChangeTags returns the tags ev makes stale: its objects (ObjectTag), and
// their types and identifiers (TypeTag, IdentTag) as stored now on the
// event's branch chain (content.Touched); a deleted branch evicts every
// render (all carry the branch type's tag: the branch tree decides what a
// render sees). Comments change no render.
func ChangeTags(ctx context.Context, r store.Reader, ev changes.Event) ([]string, error) {
	switch ev.Kind {
	case changes.KindComment:
		return nil, nil
	case changes.KindBranchDeleted:
		return []string{TypeTag(content.TypeBranch)}, nil
	}
	touch, err := content.Touched(ctx, r, ev)
	if err != nil {
		return nil, err
	}
	tags := make([]string, 0, len(touch.Objects)+len(touch.Types)+len(touch.APIIdentifiers)+len(touch.GUIDs))
	for _, id := range touch.Objects {
		tags = append(tags, ObjectTag(id))
	}
	for _, typ := range touch.Types {
		tags = append(tags, TypeTag(typ))
	}
	for _, ident := range slices.Concat(touch.APIIdentifiers, touch.GUIDs) {
		tags = append(tags, IdentTag(ident))
	}
	return tags, nil
}
