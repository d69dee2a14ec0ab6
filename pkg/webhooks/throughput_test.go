package webhooks

import (
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

// TestThroughputLog reports deliveries/s to one local receiver: a backlog
// of change events written before the dispatcher starts, drained one
// event at a time (the ordered dispatcher's rate).
func TestThroughputLog(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		e.create(t, hook(rcv.srv.URL+"/all", "k"))
		const n = 300
		var last int64
		for i := range n {
			last = e.create(t, objectOf(typ, "o"+string(rune('a'+i%26))))[0]
		}
		start := time.Now()
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true}})
		waitFor(t, "the backlog", func() bool {
			ps := rcv.payloads("/all")
			return len(ps) > 0 && len(ps[len(ps)-1].Event.ObjectIDs) == 1 && ps[len(ps)-1].Event.ObjectIDs[0] == last
		})
		got := len(rcv.payloads("/all"))
		el := time.Since(start)
		if got < n {
			t.Fatalf("received %d deliveries, want at least %d", got, n)
		}
		t.Logf("%d deliveries in %v: %.0f deliveries/s", got, el.Round(time.Millisecond), float64(got)/el.Seconds())
	})
}
