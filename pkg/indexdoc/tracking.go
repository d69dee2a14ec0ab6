package indexdoc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cmsplatform/cms/pkg/search"
)

// ErrWaitTimeout means a wait for the change-tracking state gave up before the
// wanted version or timestamp was reached.
var ErrWaitTimeout = errors.New("indexdoc: change-tracking state not reached in time")

// DefaultPollInterval is how often ChangeTracking polls while it waits.
const DefaultPollInterval = 20 * time.Millisecond

// ChangeTracking reads the change-tracking state the writer records beside
// its documents: the version of the objects index (the external version of
// VersionDocID in StateIndex: every transaction up to it is searchable)
// and the timestamp of the comments index (FieldCommentMicros of
// CommentTimestampDocID in CommentStateIndex). Readers wait on it for
// read-your-writes; it needs the engine only.
type ChangeTracking struct {
	eng    search.Engine
	prefix string
	poll   time.Duration
	wake   func() <-chan struct{}
}

// NewChangeTracking reads the indexes named with prefix (the writer's
// index prefix) on eng, polling every poll (DefaultPollInterval when 0)
// while it waits. wake, when not nil, returns a channel closed at the next
// change the writer of this process records, ending a poll early.
func NewChangeTracking(eng search.Engine, prefix string, poll time.Duration, wake func() <-chan struct{}) ChangeTracking {
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	return ChangeTracking{eng: eng, prefix: prefix, poll: poll, wake: wake}
}

// Version returns the change-tracking version of the objects index, 0
// before the first change.
func (c ChangeTracking) Version(ctx context.Context) (int64, error) {
	doc, err := c.eng.Get(ctx, c.prefix+StateIndex, VersionDocID)
	switch {
	case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("indexdoc: read version: %w", err)
	}
	return doc.Version, nil
}

// WaitForVersion waits until the version is at least minVersion or
// maxWait has passed, and returns the version it saw last. On timeout the
// error is ErrWaitTimeout (callers answering an Index request usually go
// on with the older version). A read that fails with
// search.ErrUnavailable (an index being created answers 503 for a moment)
// is retried until maxWait, and that error is returned if the wait ends
// on it; any other read error ends the wait at once. This is the one wait
// for an index version: the writer, the Index group and Delivery (its
// read-your-writes and its cache invalidator) all use it.
func (c ChangeTracking) WaitForVersion(ctx context.Context, minVersion int64, maxWait time.Duration) (int64, error) {
	var cur int64
	err := c.wait(ctx, maxWait, func() (bool, error) {
		v, err := c.Version(ctx)
		if err != nil {
			return false, err
		}
		cur = v
		return v >= minVersion, nil
	})
	return cur, err
}

// CommentTimestamp returns the change-tracking timestamp of the comments
// index; ok is false before the first comment event.
func (c ChangeTracking) CommentTimestamp(ctx context.Context) (ts time.Time, ok bool, err error) {
	doc, err := c.eng.Get(ctx, c.prefix+CommentStateIndex, CommentTimestampDocID)
	switch {
	case errors.Is(err, search.ErrNotFound), errors.Is(err, search.ErrIndexNotFound):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("indexdoc: read comment timestamp: %w", err)
	}
	us, isInt := doc.Fields[FieldCommentMicros].(int64)
	if !isInt {
		return time.Time{}, false, nil
	}
	return time.UnixMicro(us).UTC(), true, nil
}

// WaitForCommentTimestamp waits until the comment timestamp is at least
// minTS (compared in microseconds, the store's precision) or maxWait has
// passed, like WaitForVersion, and returns the timestamp seen last.
func (c ChangeTracking) WaitForCommentTimestamp(ctx context.Context, minTS time.Time, maxWait time.Duration) (time.Time, bool, error) {
	var cur time.Time
	var have bool
	err := c.wait(ctx, maxWait, func() (bool, error) {
		ts, ok, err := c.CommentTimestamp(ctx)
		if err != nil {
			return false, err
		}
		cur, have = ts, ok
		return ok && ts.UnixMicro() >= minTS.UnixMicro(), nil
	})
	return cur, have, err
}

// wait calls reached until it reports true, maxWait has passed (the last
// read error, else ErrWaitTimeout), reached fails with anything but
// search.ErrUnavailable, or ctx ends.
func (c ChangeTracking) wait(ctx context.Context, maxWait time.Duration, reached func() (bool, error)) error {
	deadline := time.Now().Add(maxWait)
	for {
		var changed <-chan struct{}
		if c.wake != nil {
			changed = c.wake()
		}
		done, err := reached()
		if err == nil && done {
			return nil
		}
		if err != nil && !errors.Is(err, search.ErrUnavailable) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			if err != nil {
				return err
			}
			return ErrWaitTimeout
		}
		t := time.NewTimer(min(left, c.poll))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
			t.Stop()
		case <-t.C:
		}
	}
}
