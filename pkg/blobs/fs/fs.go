// Package fs implements blobs.Store on the local file system, for the
// embedded mode.
//
// Layout under the root directory:
//
//	objects/<h[0:2]>/<h>   one file per blob, h = hex SHA-256 of the key
//	tmp/                   files being written
//
// Each blob file holds the content followed by a trailer: the JSON metadata,
// its length (4 bytes, big-endian) and the magic "CMSBLOB1". Content and
// metadata thus live in one file that is written to tmp/, fsynced and renamed
// into place, so a Put is atomic and a crash leaves the old blob or the new
// one, never a torn one or a blob with another blob's metadata. Naming files
// by a hash of the key means no key can reach outside the root, and keys like
// "a" and "a/b" or keys differing only in case coexist on any file system.
package fs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
)

// Options configure New.
type Options struct {
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock for Info.Modified; nil is time.Now.
	Now func() time.Time
}

// Store is a blobs.Store in a directory.
type Store struct {
	root string
	log  *slog.Logger
	now  func() time.Time
}

var _ blobs.Store = (*Store)(nil)

// New opens (creating if needed) a store rooted at dir and removes
// leftovers of writes interrupted by a crash.
func New(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blobs/fs: root directory is required")
	}
	s := &Store{root: dir, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, d := range []string{s.objectsDir(), s.tmpDir()} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("blobs/fs: %w", err)
		}
	}
	stale, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return nil, fmt.Errorf("blobs/fs: %w", err)
	}
	for _, e := range stale {
		if err := os.Remove(filepath.Join(s.tmpDir(), e.Name())); err != nil {
			s.log.Warn("removing interrupted blob write", "file", e.Name(), "err", err)
		}
	}
	return s, nil
}

func (s *Store) objectsDir() string { return filepath.Join(s.root, "objects") }
func (s *Store) tmpDir() string     { return filepath.Join(s.root, "tmp") }

// path returns the file of a validated key.
func (s *Store) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(s.objectsDir(), h[:2], h)
}

// Put implements blobs.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, meta blobs.Meta) (info blobs.Info, err error) {
	if err := blobs.ValidateKey(key); err != nil {
		return blobs.Info{}, err
	}
	tmp, err := os.CreateTemp(s.tmpDir(), "put-*")
	if err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(tmp, h), ctxReader{ctx, r}, make([]byte, copyBuffer))
	if err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	info = blobs.Info{
		Key:         key,
		Size:        n,
		SHA256:      hex.EncodeToString(h.Sum(nil)),
		ContentType: meta.ContentType,
		Modified:    s.now().UTC(),
	}
	if err := writeTrailer(tmp, info); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	if err := tmp.Sync(); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: sync: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	dst := s.path(key)
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return blobs.Info{}, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	// Make the rename durable (and the shard directory, if it is new).
	if err := syncDir(dir); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	if err := syncDir(s.objectsDir()); err != nil {
		return blobs.Info{}, fmt.Errorf("blobs/fs: put %s: %w", key, err)
	}
	return info, nil
}

// Get implements blobs.Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blobs.Info, error) {
	return s.GetRange(ctx, key, 0, -1)
}

// GetRange implements blobs.Store. It reads from the file opened at the
// call, so a concurrent Put or Delete does not change what is read.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, blobs.Info, error) {
	f, info, err := s.open(ctx, key)
	if err != nil {
		return nil, blobs.Info{}, err
	}
	n, err := blobs.RangeLen(info.Size, offset, length)
	if err != nil {
		_ = f.Close()
		return nil, blobs.Info{}, fmt.Errorf("blobs/fs: %s [%d,+%d) of %d: %w", key, offset, length, info.Size, err)
	}
	return blobs.ReadCloser{Reader: io.NewSectionReader(f, offset, n), Closer: f}, info, nil
}

// Stat implements blobs.Store.
func (s *Store) Stat(ctx context.Context, key string) (blobs.Info, error) {
	f, info, err := s.open(ctx, key)
	if err != nil {
		return blobs.Info{}, err
	}
	_ = f.Close()
	return info, nil
}

func (s *Store) open(ctx context.Context, key string) (*os.File, blobs.Info, error) {
	if err := blobs.ValidateKey(key); err != nil {
		return nil, blobs.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, blobs.Info{}, err
	}
	f, err := os.Open(s.path(key))
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, blobs.Info{}, fmt.Errorf("blobs/fs: %s: %w", key, blobs.ErrNotFound)
	}
	if err != nil {
		return nil, blobs.Info{}, fmt.Errorf("blobs/fs: %s: %w", key, err)
	}
	info, err := readTrailer(f, key)
	if err != nil {
		_ = f.Close()
		return nil, blobs.Info{}, fmt.Errorf("blobs/fs: %s: %w", key, err)
	}
	return f, info, nil
}

// Delete implements blobs.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blobs.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := s.path(key)
	err := os.Remove(p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blobs/fs: delete %s: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("blobs/fs: delete %s: %w", key, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// copyBuffer is the buffer of a Put: large writes, few system calls.
const copyBuffer = 256 << 10

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Walk implements blobs.Store. Blob files are named by a hash of their key,
// so it reads the trailer of every blob file and keeps those whose key has
// the prefix; unreadable files are logged and skipped.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(blobs.Info) error) error {
	return filepath.WalkDir(s.objectsDir(), func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(p) //nolint:gosec // p is a file WalkDir found under the store's own objects directory
		if errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("blobs/fs: walk: %w", err)
		}
		info, err := readTrailer(f, "")
		_ = f.Close()
		if err != nil {
			s.log.Warn("walk: skipping an unreadable blob file", "file", p, "err", err)
			return nil
		}
		if !strings.HasPrefix(info.Key, prefix) || s.path(info.Key) != p {
			return nil
		}
		return fn(info)
	})
}
