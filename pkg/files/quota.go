package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/fairshare"
)

// Open (uncommitted) uploads are capped per user (Reliability II item 5):
// at most Options.MaxOpenUploadsPerUser uploads and
// Options.MaxOpenUploadBytesPerUser bytes in them; beyond either a
// request is refused with a *fairshare.LimitError (429 + Retry-After,
// naming the setting) before anything is stored. Administrators are not
// capped. The count is durable, so it holds across restarts and between
// processes sharing the blob store: every upload records its owner (the
// authenticated user, in its state) and a per-user ledger blob
//
//	uploadowners/{sha256(user)}   {"uploads": {id: {size, touched}}}
//
// lists the user's open uploads; an entry not touched for UploadTTL is an
// expired upload and no longer counts. Ledgers are pruned with the
// abandoned uploads (ExpireUploads, pruneLedgers): entries idle for
// UploadTTL and entries whose upload is gone (committed, cancelled or
// expired where removing the entry failed) are dropped, and a ledger left
// empty is deleted, so a user who never comes back leaves no ledger
// behind for longer than UploadTTL and one expiry run. The ledger is read and written
// under a per-user lock in a process; two processes writing one user's
// ledger at the same instant may lose one entry (that upload then does
// not count until its next chunk). The bytes are checked before each
// chunk, which may take what is left: parallel chunks of one user may
// exceed the bytes cap by at most one chunk each.

// Defaults of the per-user caps.
const (
	DefaultMaxOpenUploadsPerUser = 100
	// DefaultMaxOpenUploadBytesPerUser lets one file of the default
	// maximum size be uploaded.
	DefaultMaxOpenUploadBytesPerUser = DefaultMaxFileBytes
	// The settings the caps are named by in refusals.
	CapOpenUploadsPerUser     = "files.maxOpenUploadsPerUser"
	CapOpenUploadBytesPerUser = "files.maxOpenUploadBytesPerUser"
	// quotaRetryAfter: an open upload goes away when it is committed,
	// cancelled or expires.
	quotaRetryAfter = time.Minute
)

type ledgerEntry struct {
	Size    int64     `json:"size"`
	Touched time.Time `json:"touched"`
}

type ledger struct {
	Uploads map[string]ledgerEntry `json:"uploads"`
}

// uploadOwner is who an upload of the caller of ctx counts against: ""
// (nobody) for administrators and when neither cap is set.
func (s *Service) uploadOwner(ctx context.Context) string {
	c := fairshare.CallerFrom(ctx)
	if c.Admin || s.opts.MaxOpenUploadsPerUser < 0 && s.opts.MaxOpenUploadBytesPerUser < 0 {
		return ""
	}
	return "user:" + c.ID
}

func ledgerKey(owner string) string {
	h := sha256.Sum256([]byte(owner))
	return ledgerPrefix + hex.EncodeToString(h[:16])
}

// lockLedger locks the ledger blob key in this process.
func (s *Service) lockLedger(key string) func() { return s.locks.lock("owner:" + key) }

// readLedger reads the ledger blob key as stored (empty when it is
// missing or corrupt).
func (s *Service) readLedger(ctx context.Context, key string) (ledger, error) {
	l := ledger{Uploads: map[string]ledgerEntry{}}
	rc, _, err := s.blobs.Get(ctx, key)
	if errors.Is(err, blobs.ErrNotFound) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&l); err != nil || l.Uploads == nil {
		s.opts.Logger.Warn("corrupt upload ledger; starting it afresh", "ledger", key, "err", err)
		l.Uploads = map[string]ledgerEntry{}
	}
	return l, nil
}

// dropIdle removes the entries of l idle for UploadTTL (expired uploads)
// and returns how many.
func (s *Service) dropIdle(l ledger) int {
	cutoff := s.opts.Now().Add(-s.opts.UploadTTL)
	n := 0
	for id, e := range l.Uploads {
		if e.Touched.Before(cutoff) {
			delete(l.Uploads, id)
			n++
		}
	}
	return n
}

// loadLedger reads the ledger blob key without the expired entries.
func (s *Service) loadLedger(ctx context.Context, key string) (ledger, error) {
	l, err := s.readLedger(ctx, key)
	if err == nil {
		s.dropIdle(l)
	}
	return l, err
}

func (s *Service) saveLedger(ctx context.Context, key string, l ledger) error {
	if len(l.Uploads) == 0 {
		return s.blobs.Delete(ctx, key)
	}
	js, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = s.blobs.Put(ctx, key, bytes.NewReader(js), blobs.Meta{ContentType: "application/json"})
	return err
}

// ledgerPrefix is where the ledgers are.
const ledgerPrefix = "uploadowners/"

// pruneLedgers rewrites every ledger without the entries that no longer
// count: idle for UploadTTL, or whose upload's state is gone (its
// upload was committed, cancelled or expired and removing the entry
// failed; a state is saved before its entry, so a missing one is no
// upload being started). A ledger left empty is deleted. It returns how
// many entries it dropped. Each ledger holds at most one entry per open
// upload of its user, so a run reads each open upload's state once.
func (s *Service) pruneLedgers(ctx context.Context) (int, error) {
	var keys []string
	if err := s.blobs.Walk(ctx, ledgerPrefix, func(info blobs.Info) error {
		keys = append(keys, info.Key)
		return nil
	}); err != nil {
		return 0, err
	}
	dropped := 0
	for _, key := range keys {
		n, err := s.pruneLedger(ctx, key)
		dropped += n
		if err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

func (s *Service) pruneLedger(ctx context.Context, key string) (int, error) {
	unlock := s.lockLedger(key)
	defer unlock()
	l, err := s.readLedger(ctx, key)
	if err != nil {
		return 0, err
	}
	dropped := s.dropIdle(l)
	for id := range l.Uploads {
		if _, err := s.blobs.Stat(ctx, stateKey(id)); errors.Is(err, blobs.ErrNotFound) {
			delete(l.Uploads, id)
			dropped++
		} else if err != nil {
			return 0, err
		}
	}
	if dropped == 0 && len(l.Uploads) > 0 {
		return 0, nil
	}
	return dropped, s.saveLedger(ctx, key, l)
}

// allowance is how many bytes the upload id of owner may still grow by
// (-1: no cap); starting is true for a new upload, which must fit the
// count (a *fairshare.LimitError beyond it).
func (s *Service) allowance(ctx context.Context, owner, id string, size int64, starting bool) (int64, error) {
	if owner == "" {
		return -1, nil
	}
	key := ledgerKey(owner)
	unlock := s.lockLedger(key)
	defer unlock()
	l, err := s.loadLedger(ctx, key)
	if err != nil {
		return 0, err
	}
	if maxN := s.opts.MaxOpenUploadsPerUser; starting && maxN >= 0 && len(l.Uploads) >= maxN {
		return 0, &fairshare.LimitError{Cap: CapOpenUploadsPerUser, Limit: int64(maxN), What: "open uploads", After: quotaRetryAfter}
	}
	maxB := s.opts.MaxOpenUploadBytesPerUser
	if maxB < 0 {
		return -1, nil
	}
	left := maxB - size
	for other, e := range l.Uploads {
		if other != id {
			left -= e.Size
		}
	}
	return max(left, 0), nil // appendChunk refuses a byte beyond
}

func (s *Service) bytesCapError() error {
	return &fairshare.LimitError{Cap: CapOpenUploadBytesPerUser, Limit: s.opts.MaxOpenUploadBytesPerUser,
		What: "bytes in open uploads", After: quotaRetryAfter}
}

// track records the open upload id of owner at size (open false: it was
// committed or cancelled and no longer counts).
func (s *Service) track(ctx context.Context, owner, id string, size int64, open bool) error {
	if owner == "" {
		return nil
	}
	key := ledgerKey(owner)
	unlock := s.lockLedger(key)
	defer unlock()
	l, err := s.loadLedger(ctx, key)
	if err != nil {
		return err
	}
	if open {
		l.Uploads[id] = ledgerEntry{Size: size, Touched: s.opts.Now().UTC()}
	} else if _, ok := l.Uploads[id]; !ok {
		return nil
	} else {
		delete(l.Uploads, id)
	}
	return s.saveLedger(ctx, key, l)
}
