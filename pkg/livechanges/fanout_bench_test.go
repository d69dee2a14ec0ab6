package livechanges

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/changes"
)

// BenchmarkFanOut measures the in-memory fan-out: events/s delivered to
// 1,000 concurrent subscribers (each drained by its own goroutine) against
// the same run with one subscriber (the baseline), and the memory one
// subscriber holds. The stream consumer and transports are not included.
func BenchmarkFanOut(b *testing.B) {
	base := fanOut(b, 1)
	many := fanOut(b, 1000)
	b.ReportMetric(many.deliveredPerSec, "deliveries/s@1000")
	b.ReportMetric(base.deliveredPerSec, "deliveries/s@1")
	b.ReportMetric(many.deliveredPerSec/base.deliveredPerSec, "ratio-vs-1-subscriber")
	b.ReportMetric(many.bytesPerSub, "B/subscriber")
}

type fanOutResult struct{ deliveredPerSec, bytesPerSub float64 }

func fanOut(b *testing.B, subs int) fanOutResult {
	h := New(Config{Buffer: DefaultBuffer, MaxSubscribers: subs})
	close(h.ready)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ss := make([]*Subscription, subs)
	for i := range ss {
		s, err := h.Subscribe(context.Background(), Filter{Branches: []int64{1}}, 0)
		if err != nil {
			b.Fatal(err)
		}
		ss[i] = s
	}
	runtime.ReadMemStats(&after)
	perSub := float64(after.HeapAlloc-before.HeapAlloc) / float64(subs)
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range s.C {
			}
		}()
	}
	const events = 500
	t0 := time.Now()
	for j := 0; j < events; j++ {
		// release drops a full subscriber; pace like a real feed so the
		// figure counts deliveries, not drops.
		h.release(Change{Event: changes.Event{Branch: 1, Transaction: int64(j + 1), Kind: changes.KindUpdated}})
		if j%64 == 63 {
			runtime.Gosched()
		}
	}
	elapsed := time.Since(t0)
	h.close()
	wg.Wait()
	dropped := 0
	for _, s := range ss {
		if s.err == ErrSlowSubscriber {
			dropped++
		}
	}
	if dropped > 0 {
		b.Logf("%d of %d subscribers dropped as slow", dropped, subs)
	}
	n := float64(events * subs)
	return fanOutResult{deliveredPerSec: n / elapsed.Seconds(), bytesPerSub: perSub}
}
