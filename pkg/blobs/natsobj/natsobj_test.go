package natsobj_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/blobtest"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestEmbedded runs the suite on one in-process nats-server (JetStream on
// t.TempDir()), one bucket per test.
func TestEmbedded(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		JetStream: true, StoreDir: t.TempDir(), DontListen: true, NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// nats-server removes an account's streams directory asynchronously
	// when its last stream is deleted, racing with the next bucket's
	// mkdir ("could not create storage directory"): keep one stream for
	// the whole test, as a real installation always has (CMS_CHANGES).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "ANCHOR", Subjects: []string{"anchor"}}); err != nil {
		t.Fatal(err)
	}
	run(t, nc)
}

// TestExternal runs the suite on the server from CMS_NATS_URL, deleting its
// buckets afterwards.
func TestExternal(t *testing.T) {
	url := testenv.URL(t, testenv.NATSURL)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	run(t, nc)
}

func run(t *testing.T, nc *nats.Conn) {
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Conformance", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blobs.Store { s, _ := newStore(t, js); return s })
	})
	// The suite again with every range past the first chunk seeking.
	t.Run("ConformanceSeeking", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blobs.Store {
			s, _ := newStore(t, js)
			natsobj.SetSeekMin(s, 1, nil)
			return s
		})
	})
	t.Run("Ranges", func(t *testing.T) { testRanges(t, js) })
	t.Run("SeekThreshold", func(t *testing.T) { testSeekThreshold(t, js) })
	t.Run("Interleaved", func(t *testing.T) { testInterleaved(t, js) })
	t.Run("OtherWriter", func(t *testing.T) { testOtherWriter(t, js) })
}

// newStore returns a store on a new bucket, deleted after the test, and
// the bucket's name.
func newStore(t testing.TB, js jetstream.JetStream) (*natsobj.Store, string) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	bucket := "T_BLOBS_" + hex.EncodeToString(b[:])
	s, err := natsobj.New(context.Background(), js, natsobj.Options{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteObjectStore(ctx, bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			t.Errorf("delete bucket %s: %v", bucket, err)
		}
	})
	return s, bucket
}

// TestSharesEventsConnection checks the intended wiring: the blob store on
// the JetStream context of the embedded events bus.
func TestSharesEventsConnection(t *testing.T) {
	bus, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	s, err := natsobj.New(t.Context(), bus.JetStream(), natsobj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "files/a.txt", strings.NewReader("hi"), blobs.Meta{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	rc, info, err := s.Get(t.Context(), "files/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil || string(b) != "hi" || info.ContentType != "text/plain" {
		t.Fatalf("Get = %q, %+v, %v", b, info, err)
	}
}
