package webhooks

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// BenchmarkDeliveries reports deliveries/s to one local receiver on both
// setups: a backlog of 300 change events written before the dispatcher
// starts, drained one event at a time by the webhook's lane (its rate),
// and, as the baseline of the same run, as many signed deliveries of the
// same payload sent straight to the receiver with the package's client
// (x-direct = dispatcher rate / direct rate). The unrecorded variant's
// store drops attempt records unwritten: the cost of recording is the
// ratio of the two variants' x-direct.
func BenchmarkDeliveries(b *testing.B) {
	b.Run("unrecorded", func(b *testing.B) { benchmarkDeliveries(b, true) })
	b.Run("recorded", func(b *testing.B) { benchmarkDeliveries(b, false) })
}

// unrecorded is a store whose attempt log writes nothing.
type unrecorded struct{ store.Store }

func (unrecorded) AppendWebhookAttempts(context.Context, []store.WebhookAttempt) error { return nil }

func benchmarkDeliveries(b *testing.B, noRecords bool) {
	setupsB(b, func(b *testing.B, e *env) {
		if noRecords {
			e.st = unrecorded{e.st}
		}
		rcv := newReceiver(b, "k")
		typ := e.create(b, objectOf(content.RootID, "Article"))[0]
		e.create(b, hook(rcv.srv.URL+"/all", "k"))
		const n = 300
		var last int64
		for i := range n {
			last = e.create(b, objectOf(typ, "o"+string(rune('a'+i%26))))[0]
		}
		b.ResetTimer()
		start := time.Now()
		e.dispatch(b, Config{Client: ClientSettings{AllowPrivate: true}})
		waitFor(b, "the backlog", func() bool {
			ps := rcv.payloads("/all")
			return len(ps) > 0 && len(ps[len(ps)-1].Event.ObjectIDs) == 1 && ps[len(ps)-1].Event.ObjectIDs[0] == last
		})
		el := time.Since(start)
		b.StopTimer()
		got := len(rcv.payloads("/all"))
		if got < n {
			b.Fatalf("received %d deliveries, want at least %d", got, n)
		}
		// The baseline: the same number of deliveries of the last payload,
		// signed and sent one after the other by the same client.
		body, _ := json.Marshal(rcv.payloads("/all")[got-1])
		c := NewClient(ClientSettings{AllowPrivate: true})
		start = time.Now()
		for i := range got {
			if a := c.Deliver(context.Background(), rcv.srv.URL+"/direct", []byte("k"), body, strconv.Itoa(i), time.Now()); !a.OK() {
				b.Fatalf("direct delivery: %s", a.Err)
			}
		}
		direct := time.Since(start)
		rate := float64(got) / el.Seconds()
		b.ReportMetric(rate, "deliveries/s")
		b.ReportMetric(float64(got)/direct.Seconds(), "direct-deliveries/s")
		b.ReportMetric(rate/(float64(got)/direct.Seconds()), "x-direct")
	})
}
