// Package setups opens, for tests, the store and the event bus of the two
// component setups: embedded (SQLite, embedded NATS) and distributed
// (PostgreSQL, NATS from CMS_POSTGRES_URL and CMS_NATS_URL: skipped
// locally without them, failing under CI). Each is fresh and closed (and
// its stream deleted) when the test ends.
package setups

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/cmsplatform/cms/pkg/auth"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/store"
	"github.com/cmsplatform/cms/pkg/store/postgres"
	"github.com/cmsplatform/cms/pkg/store/sqlite"
	"github.com/cmsplatform/cms/pkg/testenv"
	"github.com/nats-io/nats.go/jetstream"
)

// SQLiteStore is a fresh SQLite store in a temporary directory.
func SQLiteStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cms.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Content is a content service on a fresh SQLite store (SQLiteStore) with
// the system model bootstrapped.
func Content(t testing.TB) *content.Service {
	t.Helper()
	st := SQLiteStore(t)
	if err := content.Bootstrap(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return content.New(st, nil)
}

// CreateObject creates one object of type typ on the default branch as an
// administrator (with the ApiIdentifier api unless empty) and returns its
// id.
func CreateObject(t testing.TB, c *content.Service, typ int64, api string, vals ...content.ValueInput) int64 {
	t.Helper()
	in := content.ObjectInput{TypeID: typ, Values: vals}
	if api != "" {
		in.APIIdentifier = &api
	}
	_, ids, err := c.CreateObjects(context.Background(), "4", content.Change{Caller: &auth.Principal{Name: "test", Admin: true}}, []content.ObjectInput{in})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

// PostgresStore is a store on a fresh PostgreSQL database.
func PostgresStore(t testing.TB) store.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), testenv.PostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// EmbeddedBus is a bus on an embedded NATS server in a temporary
// directory.
func EmbeddedBus(t testing.TB) *natsjs.Bus {
	t.Helper()
	bus, err := natsjs.NewEmbedded(context.Background(), natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	return bus
}

// NATSBus connects to the NATS server with a fresh namespace (prefix and
// random hex, returned) named client; the namespace's streams (the change
// stream, and those a server under test made in it, e.g. the job queue)
// are deleted when the test ends (a caller's own cleanups registered
// later run first).
func NATSBus(t testing.TB, prefix, client string) (*natsjs.Bus, string) {
	t.Helper()
	natsURL := testenv.URL(t, testenv.NATSURL)
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := prefix + hex.EncodeToString(b[:])
	bus, err := natsjs.Connect(context.Background(), natsURL, natsjs.Options{Stream: events.StreamConfig{Namespace: ns}, Name: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		DeleteNATSNamespace(ctx, t, bus.JetStream(), ns)
		_ = bus.Close()
	})
	return bus, ns
}

// DeleteNATSNamespace deletes the streams of the events namespace ns (named
// ns_*) and of the object store buckets with the prefix ns (OBJ_ns_*).
func DeleteNATSNamespace(ctx context.Context, t testing.TB, js jetstream.JetStream, ns string) {
	names := js.StreamNames(ctx)
	var ours []string
	for name := range names.Name() {
		// The namespace's streams, and the streams of its object store
		// buckets ("OBJ_" + bucket).
		if strings.HasPrefix(name, ns+"_") || strings.HasPrefix(name, "OBJ_"+ns+"_") {
			ours = append(ours, name)
		}
	}
	if err := names.Err(); err != nil {
		t.Errorf("cleanup: list the streams of %s: %v", ns, err)
	}
	for _, name := range ours {
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("cleanup stream %s: %v", name, err)
		}
	}
}

// DeliverOutbox hands every pending change event of st's outbox to handle
// (a cache invalidator's Handle), in commit order, as the relay and the
// stream would, and acknowledges them.
func DeliverOutbox(t testing.TB, st store.Store, handle func(context.Context, events.Msg) error) {
	t.Helper()
	ctx := context.Background()
	evs, err := st.ClaimOutbox(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 0, len(evs))
	for _, e := range evs {
		ids = append(ids, e.ID)
		if err := handle(ctx, events.Msg{Subject: e.Subject, Data: e.Payload}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AckOutbox(ctx, ids); err != nil {
		t.Fatal(err)
	}
}
