package natsobj

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A blob's content is the object's chunk messages (128 KiB each, on the
// subject $O.{bucket}.C.{nuid} of the stream OBJ_{bucket}). They are read
// with an ordered pull consumer fetching up to readAhead chunks (8 MiB)
// ahead of the reader, whatever the blob's size: the client library's own
// object reader lets its subscription buffer up to 64 MiB. (BenchmarkFiles
// and BenchmarkFilesPeakRSS in services/internal/app: 16 chunks read
// slower than the library, 64 as fast with a smaller peak.)
const (
	readAhead = 64
	// chunkWait bounds the wait for one chunk: a chunk that does not come
	// means the object was replaced or removed while being read.
	chunkWait = 30 * time.Second
)

// openContent streams the content of the object oi and verifies its
// SHA-256 digest at the end.
func (s *Store) openContent(ctx context.Context, oi *jetstream.ObjectInfo) (io.ReadCloser, error) {
	want, err := jetstream.DecodeObjectDigest(oi.Digest)
	if err != nil {
		return nil, fmt.Errorf("object %s digest %q: %w", oi.Name, oi.Digest, err)
	}
	r := &chunkReader{ctx: ctx, name: oi.Name, chunks: oi.Chunks, size: oi.Size, want: want, h: sha256.New()}
	if oi.Chunks == 0 {
		return r, nil
	}
	cons, err := s.js.OrderedConsumer(ctx, "OBJ_"+s.bucket, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$O." + s.bucket + ".C." + oi.NUID},
	})
	if err != nil {
		return nil, err
	}
	if r.it, err = cons.Messages(jetstream.PullMaxMessages(readAhead)); err != nil {
		return nil, err
	}
	return r, nil
}

// chunkReader reads an object's chunks in order.
type chunkReader struct {
	ctx    context.Context
	name   string
	it     jetstream.MessagesContext
	chunks uint32 // left to read
	size   uint64
	read   uint64
	want   []byte
	h      hash.Hash
	buf    []byte
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.next()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// next fetches the next chunk into buf; after the last one it checks the
// size and digest and returns io.EOF.
func (r *chunkReader) next() error {
	if r.chunks == 0 {
		if r.read != r.size || !bytes.Equal(r.h.Sum(nil), r.want) {
			return fmt.Errorf("object %s: content (%d bytes) does not match its size (%d) or digest", r.name, r.read, r.size)
		}
		return io.EOF
	}
	ctx, cancel := context.WithTimeout(r.ctx, chunkWait)
	defer cancel()
	msg, err := r.it.Next(jetstream.NextContext(ctx))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil {
			return fmt.Errorf("object %s: chunk missing after %v (replaced or removed while read): %w", r.name, chunkWait, err)
		}
		return fmt.Errorf("object %s: %w", r.name, err)
	}
	r.buf = msg.Data()
	r.h.Write(r.buf)
	r.read += uint64(len(r.buf))
	r.chunks--
	return nil
}

func (r *chunkReader) Close() error {
	if r.it != nil {
		r.it.Stop()
	}
	return nil
}
