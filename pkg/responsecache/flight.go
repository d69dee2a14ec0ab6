package responsecache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/singleflight"
)

// flights builds identical concurrent misses once: the first caller of a
// key (the leader) runs the build, the others (followers) wait for it and
// share its answer. The rules:
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
//     server's recovery sees it); the followers get an error.
type flights struct {
	g singleflight.Group
	// joined counts the callers attached to a flight (leaders and
	// followers): tests wait on it to know that every caller is in.
	joined atomic.Int64
}

// leaderGone wraps the error of a build whose leader's context ended.
type leaderGone struct{ err error }

func (e *leaderGone) Error() string { return e.err.Error() }

// panicked carries a build's panic to its leader.
type panicked struct{ value any }

func (p *panicked) Error() string {
	return fmt.Sprintf("responsecache: the shared build panicked: %v", p.value)
}

// do returns build's answer for key, built by this caller (shared false)
// or by a concurrent caller with the same key (shared true). ctx is the
// context build runs with when this caller leads.
func (f *flights) do(ctx context.Context, key string, minVersion int64, build func() (rendering, error)) (r rendering, shared bool, err error) {
	for {
		led := false
		ch := f.g.DoChan(key, func() (v any, err error) {
			led = true
			defer func() {
				if p := recover(); p != nil {
					err = &panicked{value: p}
				}
			}()
			r, err := build()
			if err != nil && ctx.Err() != nil {
				err = &leaderGone{err: err}
			}
			return r, err
		})
		f.joined.Add(1)
		var res singleflight.Result
		select {
		case <-ctx.Done():
			return rendering{}, false, ctx.Err()
		case res = <-ch:
		}
		var gone *leaderGone
		var pan *panicked
		switch {
		case led && errors.As(res.Err, &pan):
			panic(pan.value)
		case led && errors.As(res.Err, &gone):
			return rendering{}, false, gone.err
		case led && res.Err != nil:
			return rendering{}, false, res.Err
		case led:
			return res.Val.(rendering), false, nil
		case errors.As(res.Err, &gone):
			if ctx.Err() != nil {
				return rendering{}, false, ctx.Err()
			}
			continue // the leader went away: lead or follow a new flight
		case res.Err != nil:
			return rendering{}, false, res.Err
		}
		if got := res.Val.(rendering); got.builtAt >= minVersion {
			return got, true, nil
		}
		// Built from an index older than this caller must see.
		r, err := build()
		return r, false, err
	}
}
