package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmsplatform/cms/pkg/changes"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/store"
)

// flaky is a receiver that fails the first fails attempts of each
// delivery (by X-Cms-Delivery) with 503, then accepts.
func flaky(t *testing.T, fails int) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Cms-Delivery")]++
		n := seen[r.Header.Get("X-Cms-Delivery")]
		mu.Unlock()
		if n <= fails {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// attempts lists every recorded attempt of hook, newest first.
func attempts(t *testing.T, e *env, hook int64) []store.WebhookAttempt {
	t.Helper()
	take := int32(MaxTake)
	p, err := NewHistory(e.st).List(t.Context(), hook, &take, "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Attempts
}

// Every attempt is recorded: a receiver failing twice shows two failed
// attempts and an accepted one per event, with the delivery id, event,
// attempt number, status and error.
func TestAttemptsRecorded(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		srv := flaky(t, 2)
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hook := e.create(t, hook(srv.URL+"/in", "k"))[0]
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: true},
			Retry: RetrySettings{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}})
		obj := e.create(t, objectOf(typ, "a1"))[0]
		o, err := e.st.GetObject(t.Context(), content.BranchDefault, obj)
		if err != nil {
			t.Fatal(err)
		}
		var mine []store.WebhookAttempt
		waitFor(t, "three attempts of the object's event", func() bool {
			mine = nil
			for _, a := range attempts(t, e, hook) {
				if a.Transaction == o.CreatedTx {
					mine = append(mine, a)
				}
			}
			return len(mine) >= 3 && mine[0].Outcome == store.WebhookAccepted
		})
		if len(mine) != 3 {
			t.Fatalf("%d attempts of the object's event, want 3: %+v", len(mine), mine)
		}
		for i, a := range mine {
			wantStatus, wantOutcome := http.StatusServiceUnavailable, store.WebhookFailed
			if i == 0 {
				wantStatus, wantOutcome = http.StatusOK, store.WebhookAccepted
			}
			if a.WebHook != hook || a.Attempt != 3-i || a.Status != wantStatus || a.Outcome != wantOutcome ||
				a.Branch != content.BranchDefault || a.Kind != changes.KindCreated || a.Delivery != mine[0].Delivery ||
				!strings.HasSuffix(a.Delivery, "-"+strconv.FormatInt(hook, 10)) ||
				(a.Error == "") != (i == 0) || a.Time.IsZero() || a.Duration <= 0 {
				t.Errorf("attempt %d of the object's event: %+v", 3-i, a)
			}
		}
	})
}

// A receiver on a refused address is recorded as such (no status) after
// one attempt, never retried, and the attempt log keeps at most Keep
// attempts per webhook.
func TestAttemptsRefusedAndPruned(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		srv := flaky(t, 0)
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hook := e.create(t, hook(srv.URL+"/in", "k"))[0]
		var mu sync.Mutex
		tries := map[int64]int{} // by transaction
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: false},
			Retry:  RetrySettings{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
			Record: RecordSettings{Keep: 3, PruneEvery: 20 * time.Millisecond},
			OnAttempt: func(_ int64, ev changes.Event, _ Attempt) {
				mu.Lock()
				defer mu.Unlock()
				tries[ev.Transaction]++
			}})
		var last int64
		for i := range 10 {
			last = e.create(t, objectOf(typ, "a"+strconv.Itoa(i)))[0]
		}
		o, err := e.st.GetObject(t.Context(), content.BranchDefault, last)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the log pruned to the 3 newest refused attempts", func() bool {
			as := attempts(t, e, hook)
			return len(as) == 3 && as[0].Transaction == o.CreatedTx
		})
		time.Sleep(200 * time.Millisecond) // retries (every 5-20ms) would come now
		for _, a := range attempts(t, e, hook) {
			if a.Outcome != store.WebhookRefusedAddress || a.Status != 0 || a.Attempt != 1 || !strings.Contains(a.Error, "not a public address") {
				t.Errorf("refused attempt recorded as %+v", a)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(tries) < 10 {
			t.Fatalf("attempts of %d transactions, want at least the 10 objects' own", len(tries))
		}
		for tx, n := range tries {
			if n != 1 {
				t.Errorf("transaction %d: %d attempts at a refused address, want 1", tx, n)
			}
		}
	})
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},             // é is 2 bytes: cut before it
		{"a\x00b", 10, "a\uFFFDb"}, // NUL: PostgreSQL refuses it
		{"a\xffb", 10, "a\uFFFDb"}, // invalid UTF-8
		{strings.Repeat("€", 400), 1024, strings.Repeat("€", 341)},
	} {
		got := truncate(c.in, c.n)
		if got != c.want || !utf8.ValidString(got) || len(got) > c.n {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// hungLog is a store whose attempt log never answers: appends wait until
// their deadline and fail.
type hungLog struct {
	store.Store
	calls atomic.Int32
}

func (h *hungLog) AppendWebhookAttempts(ctx context.Context, _ []store.WebhookAttempt) error {
	h.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// A store that hangs on recording holds no delivery back, and the
// dispatcher still stops within the recorder's timeout.
func TestRecordingNeverHoldsDeliveryBack(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		rcv := newReceiver(t, "k")
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		e.create(t, hook(rcv.srv.URL+"/all", "k"))
		hung := &hungLog{Store: e.st}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = New(hung, e.bus, Config{Client: ClientSettings{AllowPrivate: true},
				Record: RecordSettings{Timeout: 2 * time.Second}}).Run(ctx)
		}()
		created := func(n int) []int64 {
			var ids []int64
			for i := range n {
				ids = append(ids, e.create(t, objectOf(typ, "o"+strconv.Itoa(i)))[0])
			}
			return ids
		}
		delivered := func(ids []int64) bool {
			n := 0
			for _, p := range rcv.payloads("/all") {
				if slices.ContainsFunc(ids, func(id int64) bool { return slices.Contains(p.Event.ObjectIDs, id) }) {
					n++
				}
			}
			return n == len(ids)
		}
		first := created(5)
		waitFor(t, "the first events delivered and an append hanging", func() bool { return delivered(first) && hung.calls.Load() > 0 })
		// Each append hangs for 2s; deliveries waiting for them would take
		// 20s for 10 events.
		began := time.Now()
		second := created(10)
		waitFor(t, "the next events delivered", func() bool { return delivered(second) })
		if el := time.Since(began); el > 10*time.Second {
			t.Fatalf("10 events took %s to deliver beside a hung attempt log", el)
		}
		start := time.Now()
		cancel()
		<-done
		// At most the append in progress and the final flush, 2s each.
		if el := time.Since(start); el > 6*time.Second {
			t.Fatalf("the dispatcher took %s to stop with a hung attempt log", el)
		}
	})
}
