package files

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // MD5 is the content address of NovaDB's file names, not a security measure
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
)

// maxChunks bounds the chunks of one upload (422 beyond it), so that a
// client sending tiny chunks cannot grow the state without bound.
const maxChunks = 100_000

// Chunk is one upload request: the optional Extension form field, the
// Commit flag and the File part (nil when the form had none).
type Chunk struct {
	Extension *string
	Commit    bool
	Data      io.Reader
}

// UploadResult is the answer to an upload request (FileUploadResult).
type UploadResult struct {
	// Size of the file so far, in bytes.
	Size int64
	// Token names the upload until it is committed ("" afterwards).
	Token string
	// Extension with its dot ("" when the file has none).
	Extension string
	// GUID is the MD5 in GUID form, set on commit.
	GUID string
	// Created is set on commit: whether the content was new.
	Created *bool
}

// uploadState is the JSON blob of an upload in progress.
type uploadState struct {
	Ext     string    `json:"ext"`
	Size    int64     `json:"size"`
	Chunks  int       `json:"chunks"`
	MD5     []byte    `json:"md5"` // the marshalled MD5 state after the last chunk
	Started time.Time `json:"started"`
	// Owner is whom the upload counts against (quota.go; "" for nobody).
	Owner string `json:"owner,omitempty"`
	// Starter is the user who started the upload: only they may continue,
	// commit or cancel it ("" in uploads started before tokens were bound:
	// anyone holding the token).
	Starter string `json:"starter,omitempty"`
}

func stateKey(id string) string                { return "uploads/" + id + "/state" }
func chunkKey(id string, n int) string         { return fmt.Sprintf("uploads/%s/%06d", id, n) }
func tokenOf(id string, st uploadState) string { return id + st.Ext }

// StartUpload starts an upload with its first chunk; Extension is required.
func (s *Service) StartUpload(ctx context.Context, c Chunk) (UploadResult, error) {
	if c.Extension == nil {
		return UploadResult{}, fmt.Errorf("%w: the Extension form field is required on the first chunk", ErrInvalidUpload)
	}
	ext, err := NormalizeExtension(*c.Extension, true)
	if err != nil {
		return UploadResult{}, fmt.Errorf("%w: %v", ErrInvalidUpload, err)
	}
	if c.Data == nil {
		return UploadResult{}, errNoFile
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	st := uploadState{Ext: ext, Started: s.opts.Now().UTC(), Owner: s.uploadOwner(ctx), Starter: auth.UserName(ctx)}
	return s.step(ctx, id, &st, c, true)
}

// ContinueUpload appends a chunk to the upload named by token (with or
// without its extension) and commits it when asked.
func (s *Service) ContinueUpload(ctx context.Context, token string, c Chunk) (UploadResult, error) {
	id, err := parseToken(token)
	if err != nil {
		return UploadResult{}, err
	}
	if c.Data == nil {
		return UploadResult{}, errNoFile
	}
	unlock := s.locks.lock(id)
	defer unlock()
	st, err := s.loadOwnState(ctx, id)
	if err != nil {
		return UploadResult{}, err
	}
	if c.Extension != nil {
		ext, err := NormalizeExtension(*c.Extension, true)
		if err != nil {
			return UploadResult{}, fmt.Errorf("%w: %v", ErrInvalidUpload, err)
		}
		st.Ext = ext
	}
	return s.step(ctx, id, &st, c, false)
}

// CancelUpload removes an upload in progress; an unknown token is
// ErrInvalidUpload (the operation declares 400, not 404).
func (s *Service) CancelUpload(ctx context.Context, token string) error {
	id, err := parseToken(token)
	if err != nil {
		return err
	}
	unlock := s.locks.lock(id)
	defer unlock()
	st, err := s.loadOwnState(ctx, id)
	if err != nil {
		return err
	}
	if err := s.removeUpload(ctx, id, st.Chunks); err != nil {
		return err
	}
	return s.track(ctx, st.Owner, id, 0, false)
}

var errNoFile = fmt.Errorf("%w: the File part is missing", ErrInvalidUpload)

// step appends c.Data within the owner's caps (starting: a new upload),
// saves the state and commits when asked.
func (s *Service) step(ctx context.Context, id string, st *uploadState, c Chunk, starting bool) (UploadResult, error) {
	left, err := s.allowance(ctx, st.Owner, id, st.Size, starting && !c.Commit)
	if err != nil {
		return UploadResult{}, err
	}
	h, err := s.appendChunk(ctx, id, st, c.Data, left)
	if err != nil {
		return UploadResult{}, err
	}
	if !c.Commit {
		if err := s.saveState(ctx, id, *st); err != nil {
			return UploadResult{}, err
		}
		if err := s.track(ctx, st.Owner, id, st.Size, true); err != nil {
			return UploadResult{}, err
		}
		return UploadResult{Size: st.Size, Token: tokenOf(id, *st), Extension: st.Ext}, nil
	}
	var sum [md5.Size]byte
	copy(sum[:], h.Sum(nil))
	created, err := s.commit(ctx, id, *st, sum)
	if err != nil {
		// Keep the upload so that the client may retry the commit.
		_ = s.saveState(ctx, id, *st)
		_ = s.track(ctx, st.Owner, id, st.Size, true)
		return UploadResult{}, err
	}
	if err := s.removeUpload(ctx, id, st.Chunks); err != nil {
		s.opts.Logger.Warn("removing a committed upload; it will expire", "upload", id, "err", err)
	}
	if err := s.track(ctx, st.Owner, id, 0, false); err != nil {
		s.opts.Logger.Warn("removing a committed upload from its owner's ledger; it will expire", "upload", id, "err", err)
	}
	return UploadResult{Size: st.Size, Extension: st.Ext, GUID: GUID(sum), Created: &created}, nil
}

// appendChunk streams data into the next chunk blob while hashing it and
// updates st (not yet saved). An empty chunk stores nothing. At most
// allowance bytes are taken (the owner's bytes cap; -1: none).
func (s *Service) appendChunk(ctx context.Context, id string, st *uploadState, data io.Reader, allowance int64) (hash.Hash, error) {
	h := md5.New() //nolint:gosec // the content address, see the import
	if len(st.MD5) > 0 {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(st.MD5); err != nil {
			return nil, fmt.Errorf("upload %s: corrupt hash state: %w", id, err)
		}
	}
	if st.Chunks >= maxChunks {
		return nil, fmt.Errorf("%w: more than %d chunks", ErrFileTooLarge, maxChunks)
	}
	lr := &limitReader{r: data, left: min(s.opts.MaxChunkBytes, s.opts.MaxFileBytes-st.Size)}
	if lr.left == s.opts.MaxChunkBytes {
		lr.err = fmt.Errorf("%w: a chunk may hold at most %d bytes", ErrChunkTooLarge, s.opts.MaxChunkBytes)
	} else {
		lr.err = fmt.Errorf("%w: a file may hold at most %d bytes", ErrFileTooLarge, s.opts.MaxFileBytes)
	}
	if allowance >= 0 && allowance < lr.left {
		lr.left, lr.err = allowance, s.bytesCapError()
	}
	key := chunkKey(id, st.Chunks)
	info, err := s.blobs.Put(ctx, key, io.TeeReader(lr, h), blobs.Meta{})
	if err != nil {
		if lr.exceeded {
			return nil, lr.err
		}
		return nil, err
	}
	if info.Size == 0 {
		return h, s.blobs.Delete(ctx, key)
	}
	st.Chunks++
	st.Size += info.Size
	st.MD5, err = h.(encoding.BinaryMarshaler).MarshalBinary()
	return h, err
}

// commit stores the chunks once under the content hash; it reports
// whether the content was new. The hash is the one computed while the
// chunks were received (appendChunk): the chunks are not hashed again,
// their total size is checked.
func (s *Service) commit(ctx context.Context, id string, st uploadState, sum [md5.Size]byte) (bool, error) {
	key := contentKey(sum)
	if _, err := s.blobs.Stat(ctx, key); err == nil {
		return false, nil
	} else if !errors.Is(err, blobs.ErrNotFound) {
		return false, err
	}
	cr := &chunkReader{ctx: ctx, s: s, id: id, n: st.Chunks}
	defer cr.close()
	info, err := s.blobs.Put(ctx, key, cr, blobs.Meta{})
	if err != nil {
		return false, fmt.Errorf("commit upload %s: %w", id, err)
	}
	if info.Size != st.Size {
		_ = s.blobs.Delete(ctx, key)
		return false, fmt.Errorf("commit upload %s: the stored chunks (%d bytes) do not match the upload (%d bytes)", id, info.Size, st.Size)
	}
	return true, nil
}

func (s *Service) removeUpload(ctx context.Context, id string, chunks int) error {
	// The state goes first: without it the upload is gone for clients, and
	// leftover chunks expire.
	if err := s.blobs.Delete(ctx, stateKey(id)); err != nil {
		return err
	}
	for n := range chunks {
		if err := s.blobs.Delete(ctx, chunkKey(id, n)); err != nil {
			return err
		}
	}
	return nil
}

// loadOwnState is loadState for the caller of ctx: an upload another user
// started answers as an unknown token would, so a token works only for
// whoever started it and reveals nothing to anyone else.
func (s *Service) loadOwnState(ctx context.Context, id string) (uploadState, error) {
	st, err := s.loadState(ctx, id)
	if err == nil && st.Starter != "" && st.Starter != auth.UserName(ctx) {
		return uploadState{}, unknownUpload(id)
	}
	return st, err
}

func unknownUpload(id string) error {
	return fmt.Errorf("%w: no upload with token %s (unknown, committed, cancelled or expired)", ErrInvalidUpload, id)
}

func (s *Service) loadState(ctx context.Context, id string) (uploadState, error) {
	rc, _, err := s.blobs.Get(ctx, stateKey(id))
	if errors.Is(err, blobs.ErrNotFound) {
		return uploadState{}, unknownUpload(id)
	}
	if err != nil {
		return uploadState{}, err
	}
	defer rc.Close()
	var st uploadState
	if err := json.NewDecoder(io.LimitReader(rc, 64<<10)).Decode(&st); err != nil {
		return uploadState{}, fmt.Errorf("upload %s: corrupt state: %w", id, err)
	}
	return st, nil
}

func (s *Service) saveState(ctx context.Context, id string, st uploadState) error {
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = s.blobs.Put(ctx, stateKey(id), bytes.NewReader(js), blobs.Meta{ContentType: "application/json"})
	return err
}

// parseToken returns the upload id of a token: 32 lower-case hex digits,
// optionally followed by the upload's extension.
func parseToken(token string) (string, error) {
	bad := fmt.Errorf("%w: %q is not an upload token", ErrInvalidUpload, clip(token))
	if len(token) < 32 || len(token) > 32+MaxExtensionLen {
		return "", bad
	}
	id := token[:32]
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", bad
		}
	}
	if _, err := NormalizeExtension(token[32:], false); err != nil {
		return "", bad
	}
	return id, nil
}

// ExpireUploads removes uploads (and stray chunks) not written to for
// UploadTTL and returns how many it removed; then it prunes the owners'
// ledgers (pruneLedgers).
func (s *Service) ExpireUploads(ctx context.Context) (int, error) {
	latest := map[string]time.Time{}
	keys := map[string][]string{}
	err := s.blobs.Walk(ctx, "uploads/", func(info blobs.Info) error {
		id, _, _ := strings.Cut(strings.TrimPrefix(info.Key, "uploads/"), "/")
		if info.Modified.After(latest[id]) {
			latest[id] = info.Modified
		}
		keys[id] = append(keys[id], info.Key)
		return nil
	})
	if err != nil {
		return 0, err
	}
	cutoff := s.opts.Now().Add(-s.opts.UploadTTL)
	removed := 0
	for id, t := range latest {
		if !t.Before(cutoff) {
			continue
		}
		unlock := s.locks.lock(id)
		for _, k := range keys[id] {
			if k == stateKey(id) {
				continue
			}
			if err := s.blobs.Delete(ctx, k); err != nil {
				unlock()
				return removed, err
			}
		}
		err := s.blobs.Delete(ctx, stateKey(id))
		unlock()
		if err != nil {
			return removed, err
		}
		removed++
	}
	if n, err := s.pruneLedgers(ctx); err != nil {
		return removed, err
	} else if n > 0 {
		s.opts.Logger.Info("pruned upload ledgers", "entries", n)
	}
	return removed, nil
}

// limitReader fails with err once more than left bytes are read.
type limitReader struct {
	r        io.Reader
	left     int64
	err      error
	exceeded bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		l.exceeded = true
		return 0, l.err
	}
	return n, err
}

// chunkReader reads an upload's chunks in order, opening one at a time.
type chunkReader struct {
	ctx  context.Context
	s    *Service
	id   string
	n    int
	next int
	cur  io.ReadCloser
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			if c.next == c.n {
				return 0, io.EOF
			}
			rc, _, err := c.s.blobs.Get(c.ctx, chunkKey(c.id, c.next))
			if err != nil {
				return 0, fmt.Errorf("chunk %d: %w", c.next, err)
			}
			c.cur, c.next = rc, c.next+1
		}
		n, err := c.cur.Read(p)
		if errors.Is(err, io.EOF) {
			_ = c.cur.Close()
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *chunkReader) close() {
	if c.cur != nil {
		_ = c.cur.Close()
	}
}

// keyedMutex serialises the requests of one upload within a process.
// Clients send an upload's chunks one after the other; requests for one
// upload reaching two processes at once are not supported.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*refMutex{}
	}
	m := k.locks[key]
	if m == nil {
		m = &refMutex{}
		k.locks[key] = m
	}
	m.refs++
	k.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		k.mu.Lock()
		if m.refs--; m.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
