// Package natsobj implements blobs.Store on a NATS JetStream object store,
// for the distributed mode (or the embedded mode when blobs should live in
// the in-process NATS server's storage). It takes a jetstream.JetStream, so
// it shares the connection the events bus already holds.
//
// Object store puts are atomic like the file system store: chunks go to a
// fresh subject and the metadata record switching to them is written last;
// an interrupted put purges its chunks and leaves the old object.
//
// GetRange starts reading at the chunk holding the offset (see seek.go)
// when it is at least 64 chunks (8 MiB) into the object, and reads through
// from the start otherwise. A read from the start verifies the SHA-256
// digest of the whole content at EOF; a read from a later chunk cannot, and
// verifies instead that the first chunk it gets is the one holding the
// offset and that exactly the object's remaining chunks follow, each of its
// size. Objects written before this store filled every chunk, or by
// other clients (chunks may vary in size), are always read from the start.
//
// Known limit: a blob replaced or deleted while it is being read may make
// that read fail (its chunks are purged) rather than finish; it never
// returns mixed content.
package natsobj

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/blobs"
)

// Defaults for Options.
const (
	DefaultBucket      = "CMS_BLOBS"
	DefaultReadTimeout = 15 * time.Minute
)

// BucketName is the bucket of an installation: DefaultBucket, prefixed
// with prefix and "_" when there is one (several installations sharing a
// NATS server keep their blobs apart, as their streams; a clean-up of one
// never sees the other's files).
func BucketName(prefix string) string {
	if prefix == "" {
		return DefaultBucket
	}
	return prefix + "_" + DefaultBucket
}

// contentTypeHeader carries blobs.Meta.ContentType in the object's headers.
const contentTypeHeader = "Content-Type"

// Options configure New.
type Options struct {
	// Bucket is the object store bucket, created if missing.
	Bucket string
	// Replicas of the bucket's stream; 0 means 1.
	Replicas int
	// ReadTimeout bounds a whole Get when the caller's ctx has no deadline
	// (the client library would otherwise apply its 5s API timeout to the
	// entire download).
	ReadTimeout time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// Store is a blobs.Store in a JetStream object store bucket.
type Store struct {
	bucket      string
	obs         jetstream.ObjectStore
	stream      jetstream.Stream // the bucket's stream, holding the chunks
	readTimeout time.Duration
	seekMin     uint64 // chunks into an object from which GetRange seeks
	log         *slog.Logger
	onSeek      func(chunk, seq uint64) // test hook, nil
}

var _ blobs.Store = (*Store)(nil)

// New creates the bucket if needed (file storage) and returns a store on it.
func New(ctx context.Context, js jetstream.JetStream, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		opts.Bucket = DefaultBucket
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 1
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      opts.Bucket,
		Description: "CMS binary content",
		Storage:     jetstream.FileStorage,
		Replicas:    opts.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("blobs/natsobj: bucket %s: %w", opts.Bucket, err)
	}
	stream, err := js.Stream(ctx, "OBJ_"+opts.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blobs/natsobj: bucket %s stream: %w", opts.Bucket, err)
	}
	return &Store{bucket: opts.Bucket, obs: obs, stream: stream, readTimeout: opts.ReadTimeout,
		seekMin: defaultSeekMin, log: opts.Logger}, nil
}

// Put implements blobs.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, meta blobs.Meta) (blobs.Info, error) {
	if err := blobs.ValidateKey(key); err != nil {
		return blobs.Info{}, err
	}
	om := jetstream.ObjectMeta{
		Name:     key,
		Metadata: map[string]string{fixedChunksKey: "true"},
		Opts:     &jetstream.ObjectMetaOptions{ChunkSize: chunkSize},
	}
	if meta.ContentType != "" {
		om.Headers = nats.Header{contentTypeHeader: []string{meta.ContentType}}
	}
	oi, err := s.obs.Put(ctx, om, fullReader{r})
	if err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/natsobj: put %s: %w", key, err)
	}
	return toInfo(oi)
}

// Get implements blobs.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blobs.Info, error) {
	return s.GetRange(ctx, key, 0, -1)
}

// GetRange implements blobs.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, blobs.Info, error) {
	if err := blobs.ValidateKey(key); err != nil {
		return nil, blobs.Info{}, err
	}
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, s.readTimeout)
	}
	oi, err := s.obs.GetInfo(ctx, key)
	if err == nil && oi.Deleted {
		err = jetstream.ErrObjectNotFound
	}
	if err == nil && oi.Opts != nil && oi.Opts.Link != nil {
		err = fmt.Errorf("object %s is a link (this store writes none)", key)
	}
	if err != nil {
		cancel()
		return nil, blobs.Info{}, s.wrap("get", key, err)
	}
	info, err := toInfo(oi)
	var n int64
	if err == nil {
		n, err = blobs.RangeLen(info.Size, offset, length)
	}
	var first, startSeq uint64
	skip := offset // bytes to discard from the first chunk read
	if cs := fixedChunkSize(oi); err == nil && cs > 0 && uint64(offset)/cs >= max(s.seekMin, 1) && offset < info.Size {
		first = uint64(offset) / cs
		if startSeq, err = s.chunkStart(ctx, oi, first); err != nil {
			err = fmt.Errorf("seeking chunk %d: %w", first, err)
		} else if s.onSeek != nil {
			s.onSeek(first, startSeq)
		}
		skip -= int64(first * cs)
	}
	var res io.ReadCloser
	if err == nil {
		res, err = s.openContent(ctx, oi, uint32(first), startSeq)
	}
	if err != nil {
		cancel()
		return nil, blobs.Info{}, s.wrap("get", key, err)
	}
	closer := closeFunc(func() error { err := res.Close(); cancel(); return err })
	if skip > 0 {
		if _, err = io.CopyN(io.Discard, res, skip); err != nil {
			_ = closer.Close()
			return nil, blobs.Info{}, s.wrap("get", key, fmt.Errorf("skipping to offset %d: %w", offset, err))
		}
	}
	var r io.Reader = res
	if offset+n < info.Size {
		r = io.LimitReader(res, n) // a read to EOF also verifies sizes (and the digest from the start)
	}
	return blobs.ReadCloser{Reader: r, Closer: closer}, info, nil
}

// Stat implements blobs.Store.
func (s *Store) Stat(ctx context.Context, key string) (blobs.Info, error) {
	if err := blobs.ValidateKey(key); err != nil {
		return blobs.Info{}, err
	}
	oi, err := s.obs.GetInfo(ctx, key)
	if err != nil {
		return blobs.Info{}, s.wrap("stat", key, err)
	}
	info, err := toInfo(oi)
	if err != nil {
		return blobs.Info{}, s.wrap("stat", key, err)
	}
	return info, nil
}

// Delete implements blobs.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blobs.ValidateKey(key); err != nil {
		return err
	}
	err := s.obs.Delete(ctx, key)
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return s.wrap("delete", key, err)
	}
	return nil
}

func (s *Store) wrap(op, key string, err error) error {
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("blobs/natsobj: %s %s: %w", op, key, blobs.ErrNotFound)
	}
	return fmt.Errorf("blobs/natsobj: %s %s: %w", op, key, err)
}

func toInfo(oi *jetstream.ObjectInfo) (blobs.Info, error) {
	sum, err := jetstream.DecodeObjectDigest(oi.Digest)
	if err != nil {
		return blobs.Info{}, fmt.Errorf("object %s digest %q: %w", oi.Name, oi.Digest, err)
	}
	return blobs.Info{
		Key:         oi.Name,
		Size:        int64(oi.Size),
		SHA256:      hex.EncodeToString(sum),
		ContentType: oi.Headers.Get(contentTypeHeader),
		Modified:    oi.ModTime.UTC(),
	}, nil
}

type closeFunc func() error

func (f closeFunc) Close() error { return f() }

// Walk implements blobs.Store over the bucket's object list (metadata
// only; no content is read).
func (s *Store) Walk(ctx context.Context, prefix string, fn func(blobs.Info) error) error {
	list, err := s.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blobs/natsobj: walk: %w", err)
	}
	for _, oi := range list {
		if oi.Deleted || !strings.HasPrefix(oi.Name, prefix) {
			continue
		}
		info, err := toInfo(oi)
		if err != nil {
			s.log.Warn("walk: skipping an unreadable object", "object", oi.Name, "err", err)
			continue
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}
