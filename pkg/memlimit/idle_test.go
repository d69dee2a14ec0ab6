package memlimit

import (
	"context"
	"runtime"
	"testing"
	"time"
)

var sink [][]byte

// TestReleaseWhenIdle: after a burst of allocation the quiet process is
// collected and its freed memory returned once; a working process (steady
// allocation) is not collected by it, and a quiet one not again and again.
func TestReleaseWhenIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- ReleaseWhenIdle(ctx, IdleOptions{Interval: 50 * time.Millisecond}) }()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// A burst: 64 MiB of garbage.
	for i := 0; i < 64; i++ {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
	// Working: allocating steadily, 4 MiB per interval.
	stop := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(stop) {
		sink = append(sink[:0], make([]byte, 1<<20))
		time.Sleep(12 * time.Millisecond)
	}
	sink = nil
	var working runtime.MemStats
	runtime.ReadMemStats(&working)
	// Quiet for a while.
	time.Sleep(600 * time.Millisecond)
	cancel()
	n := <-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n != 1 {
		t.Errorf("released %d times, want once (after the work, not during it, not again while quiet)", n)
	}
	if after.HeapReleased <= working.HeapReleased {
		t.Errorf("heap released %d bytes after the quiet period, %d before: nothing returned", after.HeapReleased, working.HeapReleased)
	}
}
