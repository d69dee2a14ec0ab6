package memlimit

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Idle release: the garbage collector runs when the heap reaches its goal
// (twice the live heap by default), so a process that goes quiet keeps the
// garbage of its last work, up to the goal, for as long as it stays quiet
// (the runtime forces a collection only every two minutes, and returns
// freed pages slowly). ReleaseWhenIdle collects and returns that memory
// once the process is quiet: at most one collection per quiet period, none
// while it works.

// IdleOptions tune ReleaseWhenIdle; the zero value takes the defaults.
type IdleOptions struct {
	// Interval between checks (default 2s).
	Interval time.Duration
	// Quiet: at most this many bytes allocated during one interval
	// (default 1 MiB).
	Quiet uint64
	// Worth: at least this many bytes allocated since the last release
	// (default 4 MiB), so a quiet process is not collected again and again.
	Worth uint64
}

// ReleaseWhenIdle runs until ctx ends: every interval it reads the bytes
// allocated so far, and when the last interval was quiet after enough
// allocation, it collects and returns the freed memory to the system
// (debug.FreeOSMemory). It returns the number of releases.
func ReleaseWhenIdle(ctx context.Context, o IdleOptions) int {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.Quiet == 0 {
		o.Quiet = 1 << 20
	}
	if o.Worth == 0 {
		o.Worth = 4 << 20
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	prev := allocated()
	released, n := prev, 0
	for {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
		}
		now := allocated()
		if now-prev <= o.Quiet && now-released >= o.Worth {
			debug.FreeOSMemory()
			n++
			now = allocated()
			released = now
		}
		prev = now
	}
}

// allocated is the total of bytes allocated on the heap since the start.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
