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
// expired upload and no longer counts. The ledger is read and written
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
	return "uploadowners/" + hex.EncodeToString(h[:16])
}

// loadLedger reads owner's ledger without the expired entries.
func (s *Service) loadLedger(ctx context.Context, owner string) (ledger, error) {
	l := ledger{Uploads: map[string]ledgerEntry{}}
	rc, _, err := s.blobs.Get(ctx, ledgerKey(owner))
	if errors.Is(err, blobs.ErrNotFound) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&l); err != nil || l.Uploads == nil {
		s.opts.Logger.Warn("corrupt upload ledger; starting it afresh", "owner", ledgerKey(owner), "err", err)
		l.Uploads = map[string]ledgerEntry{}
	}
	cutoff := s.opts.Now().Add(-s.opts.UploadTTL)
	for id, e := range l.Uploads {
		if e.Touched.Before(cutoff) {
			delete(l.Uploads, id)
		}
	}
	return l, nil
}

func (s *Service) saveLedger(ctx context.Context, owner string, l ledger) error {
	if len(l.Uploads) == 0 {
		return s.blobs.Delete(ctx, ledgerKey(owner))
	}
	js, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = s.blobs.Put(ctx, ledgerKey(owner), bytes.NewReader(js), blobs.Meta{ContentType: "application/json"})
	return err
}

// allowance is how many bytes the upload id of owner may still grow by
// (-1: no cap); starting is true for a new upload, which must fit the
// count (a *fairshare.LimitError beyond it).
func (s *Service) allowance(ctx context.Context, owner, id string, size int64, starting bool) (int64, error) {
	if owner == "" {
		return -1, nil
	}
	unlock := s.locks.lock("owner:" + owner)
	defer unlock()
	l, err := s.loadLedger(ctx, owner)
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
	unlock := s.locks.lock("owner:" + owner)
	defer unlock()
	l, err := s.loadLedger(ctx, owner)
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
	return s.saveLedger(ctx, owner, l)
}
