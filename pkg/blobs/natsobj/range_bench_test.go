package natsobj_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// BenchmarkRangeAtEnd reads the last MiB of a 256 MiB blob from the NATS
// server of CMS_NATS_URL: readThrough (the baseline: the bytes before it
// read and discarded) and seek (from the chunk holding the offset), in the
// same run. The op/s ratio is the gain.
func BenchmarkRangeAtEnd(b *testing.B) {
	nc, err := nats.Connect(testenv.URL(b, testenv.NATSURL))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close) // after the bucket's deletion
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := newStore(b, js)
	const size, n = 256 << 20, 1 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	data := randData(b, size)
	if _, err := s.Put(ctx, "big", bytes.NewReader(data), blobs.Meta{}); err != nil {
		b.Fatal(err)
	}
	benchLastBytes(ctx, b, s, "big", data, n)
}

// BenchmarkRangeInterleaved reads the last MiB of one of three 32 MiB
// blobs put at the same time (their chunks interleaved in the stream, so
// the chunk is found by binary search): readThrough vs seek.
func BenchmarkRangeInterleaved(b *testing.B) {
	nc, err := nats.Connect(testenv.URL(b, testenv.NATSURL))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := newStore(b, js)
	const blobsN, size, n = 3, 32 << 20, 1 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l := &lockstep{}
	var data []byte
	for i := range blobsN {
		d := randData(b, size)
		if i == 0 {
			data = d
		}
		l.turn = append(l.turn, make(chan struct{}, 1))
		l.datas = append(l.datas, d)
		l.done = append(l.done, false)
	}
	l.turn[0] <- struct{}{}
	errs := make(chan error, blobsN)
	for i := range blobsN {
		go func() {
			_, err := s.Put(ctx, string(rune('a'+i)), &turnReader{l, i}, blobs.Meta{})
			errs <- err
		}()
	}
	for range blobsN {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	benchLastBytes(ctx, b, s, "a", data, n)
}

// benchLastBytes reads the last n bytes of the blob key (content data)
// reading through from the start and seeking, as sub-benchmarks of b.
func benchLastBytes(ctx context.Context, b *testing.B, s *natsobj.Store, key string, data []byte, n int64) {
	size := int64(len(data))
	want := data[size-n:]
	for _, bc := range []struct {
		name    string
		seekMin uint64
	}{{"readThrough", 1 << 40}, {"seek", 64}} {
		b.Run(bc.name, func(b *testing.B) {
			natsobj.SetSeekMin(s, bc.seekMin, nil)
			b.SetBytes(n)
			for b.Loop() {
				rc, _, err := s.GetRange(ctx, key, size-n, n)
				if err != nil {
					b.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(got, want) {
					b.Fatalf("read %d bytes, %v", len(got), err)
				}
			}
		})
	}
}
