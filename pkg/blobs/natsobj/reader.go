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

// openContent streams the content of the object oi from its chunk first
// (0-based; the sequence startSeq must then be one chunkStart returned for
// it). Whatever the start, it checks that exactly the object's remaining
// chunks come, each of its size when the object has fixed chunks
// (fixedChunkSize). A read from the first chunk also verifies the SHA-256
// digest of the whole content at the end; a read from a later chunk, which
// cannot, checks that the first chunk it gets is the one it asked for (by
// the number of the subject's messages after it).
func (s *Store) openContent(ctx context.Context, oi *jetstream.ObjectInfo, first uint32, startSeq uint64) (io.ReadCloser, error) {
	want, err := jetstream.DecodeObjectDigest(oi.Digest)
	if err != nil {
		return nil, fmt.Errorf("object %s digest %q: %w", oi.Name, oi.Digest, err)
	}
	r := &chunkReader{ctx: ctx, name: oi.Name, chunks: oi.Chunks - first, index: first, last: oi.Chunks - 1,
		chunkSize: fixedChunkSize(oi), size: oi.Size}
	if first == 0 {
		r.want, r.h = want, sha256.New()
	} else {
		r.size -= uint64(first) * r.chunkSize
	}
	if r.chunks == 0 {
		return r, nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.chunkSubject(oi)}}
	if startSeq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, startSeq
	}
	cons, err := s.stream.OrderedConsumer(ctx, cfg)
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
	ctx       context.Context
	name      string
	it        jetstream.MessagesContext
	chunks    uint32 // left to read
	index     uint32 // of the next chunk
	last      uint32 // index of the object's last chunk
	chunkSize uint64 // of every chunk but the last, 0 if they vary
	size      uint64 // of the chunks read and left
	read      uint64
	want      []byte    // digest of the whole content, nil for a read from a later chunk
	h         hash.Hash // nil with want
	buf       []byte
	err       error
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
// size (and digest when reading from the start) and returns io.EOF.
func (r *chunkReader) next() error {
	if r.chunks == 0 {
		if r.read != r.size || (r.h != nil && !bytes.Equal(r.h.Sum(nil), r.want)) {
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
	data := msg.Data()
	if r.h == nil && r.read == 0 {
		// The first chunk of a seek: the ones after it are in place if it
		// is (the ordered consumer delivers the subject's messages in
		// order without gaps).
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("object %s: chunk %d: %w", r.name, r.index, err)
		}
		if md.NumPending != uint64(r.last-r.index) {
			return fmt.Errorf("object %s: the chunk at sequence %d has %d after it, chunk %d has %d",
				r.name, md.Sequence.Stream, md.NumPending, r.index, r.last-r.index)
		}
	}
	if r.chunkSize > 0 {
		want := r.chunkSize
		if r.index == r.last {
			want = r.size - r.read
		}
		if uint64(len(data)) != want {
			return fmt.Errorf("object %s: chunk %d has %d bytes, want %d", r.name, r.index, len(data), want)
		}
	}
	if r.h != nil {
		r.h.Write(data)
	}
	r.buf = data
	r.read += uint64(len(data))
	r.chunks--
	r.index++
	return nil
}

func (r *chunkReader) Close() error {
	if r.it != nil {
		r.it.Stop()
	}
	return nil
}
