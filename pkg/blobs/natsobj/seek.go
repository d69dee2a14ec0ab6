package natsobj

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Seeking. The object store has no random access, but an object's chunks
// are the messages of its chunk subject in stream order, and every object
// this store writes has chunks of exactly chunkSize bytes but the last
// (fixedChunksKey in its metadata; fullReader fills each chunk). So byte
// offset lies in chunk k = offset / chunkSize, and reading can start at
// the stream sequence of the subject's k-th message: GetRange skips at most
// one chunk's bytes instead of everything before the offset.
//
// The sequence is found exactly by the number of the subject's messages at
// or after a sequence s, P(s), which the server computes when a consumer
// starting at s is created (its num_pending). The chunks of an object
// written alone are consecutive, found with one probe; chunks interleaved
// with other objects' (concurrent puts) by a binary search over the stream's
// sequences, one probe per halving.
const (
	// chunkSize of the objects Put writes (the client library's default).
	chunkSize = 128 * 1024
	// fixedChunksKey in an object's metadata marks an object whose chunks
	// all have Opts.ChunkSize bytes but the last. Objects without it
	// (written by another client, or before this store filled its chunks)
	// are read from their start.
	fixedChunksKey = "cms-fixed-chunks"
	// defaultSeekMin: a range starting fewer chunks than this into the
	// object is read through from its start (as cheap as the probes: the
	// read-ahead fetches these chunks in one round trip anyway).
	defaultSeekMin = readAhead
	// seekWait bounds locating the first chunk of a range.
	seekWait = 30 * time.Second
)

// fullReader makes each Read fill p unless the content ends, so the
// object store's Put (one Read per chunk) writes chunks of the full size.
type fullReader struct{ r io.Reader }

func (f fullReader) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// fixedChunkSize returns the chunk size of an object whose chunks all have
// that size but the last, or 0 when they may not (no seeking, no check of
// each chunk's size).
func fixedChunkSize(oi *jetstream.ObjectInfo) uint64 {
	if oi.Metadata[fixedChunksKey] != "true" || oi.Opts == nil || oi.Opts.ChunkSize == 0 {
		return 0
	}
	cs := uint64(oi.Opts.ChunkSize)
	if uint64(oi.Chunks) != (oi.Size+cs-1)/cs {
		return 0
	}
	return cs
}

// chunkSubject is the subject of the object's chunk messages.
func (s *Store) chunkSubject(oi *jetstream.ObjectInfo) string {
	return "$O." + s.bucket + ".C." + oi.NUID
}

// chunkStart returns a stream sequence from which the first message on
// the object's chunk subject is its chunk k (0-based, k < oi.Chunks).
func (s *Store) chunkStart(ctx context.Context, oi *jetstream.ObjectInfo, k uint64) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, seekWait)
	defer cancel()
	subj := s.chunkSubject(oi)
	first, err := s.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subj))
	if err != nil {
		return 0, fmt.Errorf("first chunk: %w", err)
	}
	// P(x) for x in (seq of chunk k-1, seq of chunk k] is want.
	want := uint64(oi.Chunks) - k
	lo := first.Sequence + k // chunk k is here or later
	p, err := s.pending(ctx, subj, lo)
	if err != nil || p == want {
		return lo, err // consecutive chunks: one probe
	}
	if p < want {
		return 0, fmt.Errorf("%d chunks from sequence %d, want at least %d (replaced or removed while read)", p, lo, want)
	}
	si, err := s.stream.Info(ctx)
	if err != nil {
		return 0, err
	}
	// Invariant: P(lo) > want >= P(hi); P(last+1) = 0 < want.
	hi := si.State.LastSeq + 1
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p, err = s.pending(ctx, subj, mid); err != nil {
			return 0, err
		}
		switch {
		case p == want:
			return mid, nil
		case p > want:
			lo = mid
		default:
			hi = mid
		}
	}
	// P falls by at most one per sequence, so P(hi) = P(lo)-1 = want.
	return hi, nil
}

// pending returns P(seq): how many messages on subj the stream holds at or
// after seq, the num_pending of a consumer created there (and deleted).
func (s *Store) pending(ctx context.Context, subj string, seq uint64) (uint64, error) {
	cons, err := s.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject:     subj,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       seq,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: seekWait, // removed by the server if Delete fails
		Replicas:          1,
		MemoryStorage:     true,
	})
	if err != nil {
		return 0, fmt.Errorf("probe at sequence %d: %w", seq, err)
	}
	ci := cons.CachedInfo()
	if err := s.stream.DeleteConsumer(ctx, ci.Name); err != nil {
		s.log.Debug("blobs/natsobj: deleting a probe consumer", "consumer", ci.Name, "err", err)
	}
	return ci.NumPending, nil
}
