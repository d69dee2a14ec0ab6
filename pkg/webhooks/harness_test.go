package webhooks

import (
	"context"
	"encoding/json"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/outbox"
	"github.com/cmsplatform/cms/pkg/store"
	testsetups "github.com/cmsplatform/cms/pkg/testenv/setups"
)

type env struct {
	st      store.Store
	bus     *natsjs.Bus
	content *content.Service
}

// setups runs fn on the embedded setup (SQLite, embedded NATS) and the
// distributed one (PostgreSQL, NATS; skipped locally without CMS_*_URL,
// failing under CI).
func setups(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("embedded", func(t *testing.T) {
		fn(t, start(t, testsetups.SQLiteStore(t), testsetups.EmbeddedBus(t)))
	})
	t.Run("distributed", func(t *testing.T) {
		st := testsetups.PostgresStore(t)
		bus, _ := testsetups.NATSBus(t, "hooktest", "webhooks-test")
		fn(t, start(t, st, bus))
	})
}

// setupsB is setups for a benchmark.
func setupsB(b *testing.B, fn func(b *testing.B, e *env)) {
	b.Run("embedded", func(b *testing.B) {
		fn(b, start(b, testsetups.SQLiteStore(b), testsetups.EmbeddedBus(b)))
	})
	b.Run("distributed", func(b *testing.B) {
		st := testsetups.PostgresStore(b)
		bus, _ := testsetups.NATSBus(b, "hooktest", "webhooks-test")
		fn(b, start(b, st, bus))
	})
}

func start(t testing.TB, st store.Store, bus *natsjs.Bus) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := content.Bootstrap(ctx, st); err != nil {
		t.Fatal(err)
	}
	relay := outbox.New(st, bus, outbox.Options{Idle: 10 * time.Millisecond, MaxIdle: 50 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &env{st: st, bus: bus, content: content.New(st, nil)}
}

var admin = content.Change{Caller: &auth.Principal{Name: "admin", Admin: true}, Comment: "test"}

func vin(attr int64, v any) content.ValueInput {
	b, _ := json.Marshal(v)
	lang := int64(0)
	if attr == content.AttrName {
		lang = content.LanguageEnUS
	}
	return content.ValueInput{Attribute: attr, Language: lang, JSON: b}
}

// create writes objects and returns their ids.
func (e *env) create(t testing.TB, in ...content.ObjectInput) []int64 {
	t.Helper()
	_, ids, err := e.content.CreateObjects(context.Background(), "4", admin, in)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func (e *env) rename(t *testing.T, id int64, name string) {
	t.Helper()
	_, err := e.content.UpdateObjects(context.Background(), "4", admin, []content.ObjectInput{{ID: id, Values: []content.ValueInput{vin(content.AttrName, name)}}})
	if err != nil {
		t.Fatal(err)
	}
}

// hook is a definition input; extra values replace the defaults of their
// attribute.
func hook(url, secret string, extra ...content.ValueInput) content.ObjectInput {
	vals := []content.ValueInput{}
	for _, v := range []content.ValueInput{vin(content.AttrName, "hook"), vin(content.AttrWebHookURL, url),
		vin(content.AttrWebHookSecret, secret), vin(content.AttrWebHookEnabled, true)} {
		if !slices.ContainsFunc(extra, func(x content.ValueInput) bool { return x.Attribute == v.Attribute }) {
			vals = append(vals, v)
		}
	}
	return content.ObjectInput{TypeID: content.TypeWebHookDefinition, Values: append(vals, extra...)}
}

// receiver is a local webhook receiver that verifies signatures and can
// be taken down (answers 503).
type receiver struct {
	srv    *httptest.Server
	secret []byte
	down   atomic.Bool
	mu     sync.Mutex
	got    map[string][]Payload // by URL path
	bad    int
	// arrived is when an event touching each object first arrived, by
	// URL path.
	arrived map[string]map[int64]time.Time
}

func newReceiver(t testing.TB, secret string) *receiver {
	r := &receiver{secret: []byte(secret), got: map[string][]Payload{}, arrived: map[string]map[int64]time.Time{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		var p Payload
		if Verify(r.secret, req.Header.Get(SignatureHeader), body, time.Now(), time.Minute) != nil || json.Unmarshal(body, &p) != nil {
			r.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		r.got[req.URL.Path] = append(r.got[req.URL.Path], p)
		if r.arrived[req.URL.Path] == nil {
			r.arrived[req.URL.Path] = map[int64]time.Time{}
		}
		for _, id := range p.Event.ObjectIDs {
			if _, ok := r.arrived[req.URL.Path][id]; !ok {
				r.arrived[req.URL.Path][id] = time.Now()
			}
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// arrival is when an event touching object id first arrived at path
// (false: none yet).
func (r *receiver) arrival(path string, id int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.arrived[path][id]
	return at, ok
}

func (r *receiver) payloads(path string) []Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Payload(nil), r.got[path]...)
}

// dispatch runs a dispatcher until the test ends.
func (e *env) dispatch(t testing.TB, cfg Config) *Dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	d := New(e.st, e.bus, cfg)
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

// waitFor polls cond for up to 30s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
