package responsecache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// flights builds identical concurrent misses once: the first caller of a
// key (the leader) runs the build in its own goroutine, the others
// (followers) wait for it and share its answer. The rules:
//
//   - Only a running build is shared, never a finished one: the key is
//     forgotten when the build returns, so a failed build is not an
//     answer for anybody who comes later (they build again), and only
//     successful builds are stored in the cache.
//   - A follower that needs a newer index version than the leader's build
//     saw (X-Cms-Min-Version) does not take its answer but builds its own.
//   - A build that failed while its leader's context had ended (the
//     caller went away or ran out of time) says nothing about the
//     followers: they start a new flight instead of failing with it.
//   - A follower whose own context ends stops waiting at once.
//   - A panicking build panics in its leader's goroutine (where the
//     server's recovery sees it); the followers get ErrBuildPanicked.
//
// It is a small own implementation rather than x/sync/singleflight: the
// leader calls build directly (DoChan would run it in a new goroutine and
// make every build closure escape to the heap, also on cache hits), and
// followers wait with their own context (Do cannot).
type flights struct {
	mu    sync.Mutex
	calls map[string]*flight
	// joined counts the callers attached to a flight (leaders and
	// followers): tests wait on it to know that every caller is in.
	joined atomic.Int64
}

// flight is one running build.
type flight struct {
	done chan struct{} // closed when r and err are set
	r    rendering
	err  error
}

// ErrBuildPanicked is what the followers of a build that panicked get.
var ErrBuildPanicked = errors.New("responsecache: the shared build panicked")

// leaderGone wraps the error of a build whose leader's context ended.
type leaderGone struct{ err error }

func (e *leaderGone) Error() string { return e.err.Error() }

// do returns build's answer for key, built by this caller (shared false)
// or by a concurrent caller with the same key (shared true). ctx is the
// caller's context (build runs with it when this caller leads).
func (f *flights) do(ctx context.Context, key string, minVersion int64, build func() (rendering, error)) (r rendering, shared bool, err error) {
	for {
		f.mu.Lock()
		fl, running := f.calls[key]
		if !running {
			fl = &flight{done: make(chan struct{})}
			if f.calls == nil {
				f.calls = map[string]*flight{}
			}
			f.calls[key] = fl
		}
		f.mu.Unlock()
		f.joined.Add(1)
		if !running {
			r, err := f.lead(ctx, key, fl, build)
			return r, false, err
		}
		select {
		case <-ctx.Done():
			return rendering{}, false, ctx.Err()
		case <-fl.done:
		}
		var gone *leaderGone
		switch {
		case errors.As(fl.err, &gone):
			if ctx.Err() != nil {
				return rendering{}, false, ctx.Err()
			}
			continue // the leader went away: lead or follow a new flight
		case fl.err != nil:
			return rendering{}, false, fl.err
		case fl.r.builtAt < minVersion:
			// Built from an index older than this caller must see.
			r, err := build()
			return r, false, err
		}
		return fl.r, true, nil
	}
}

// lead runs build for the followers of fl and ends the flight.
func (f *flights) lead(ctx context.Context, key string, fl *flight, build func() (rendering, error)) (r rendering, err error) {
	fl.err = ErrBuildPanicked // unless build returns
	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(fl.done)
	}()
	r, err = build()
	fl.r, fl.err = r, err
	if err != nil && ctx.Err() != nil {
		fl.err = &leaderGone{err: err}
	}
	return r, err
}
