package webhooks

import (
	"net/http"
	"net/http/httptest"
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

// A receiver on a refused address is recorded as such (no status), and
// the attempt log keeps at most Keep attempts per webhook.
func TestAttemptsRefusedAndPruned(t *testing.T) {
	setups(t, func(t *testing.T, e *env) {
		srv := flaky(t, 0)
		typ := e.create(t, objectOf(content.RootID, "Article"))[0]
		hook := e.create(t, hook(srv.URL+"/in", "k"))[0]
		var tries atomic.Int32
		e.dispatch(t, Config{Client: ClientSettings{AllowPrivate: false},
			Retry:     RetrySettings{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
			Record:    RecordSettings{Keep: 3, PruneEvery: 20 * time.Millisecond},
			OnAttempt: func(int64, changes.Event, Attempt) { tries.Add(1) }})
		e.create(t, objectOf(typ, "a1"))
		waitFor(t, "ten refused attempts", func() bool { return tries.Load() >= 10 })
		waitFor(t, "the log pruned to 3 attempts", func() bool {
			as := attempts(t, e, hook)
			return len(as) == 3 && as[0].Attempt >= 10
		})
		for _, a := range attempts(t, e, hook) {
			if a.Outcome != store.WebhookRefusedAddress || a.Status != 0 || !strings.Contains(a.Error, "not a public address") {
				t.Errorf("refused attempt recorded as %+v", a)
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
