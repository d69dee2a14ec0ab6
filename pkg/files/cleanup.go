package files

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/store"
)

// Clean-up of unreferenced content. A stored file is referenced when a
// binary proxy object on any branch — live or deleted (a deleted object
// can be restored), in the store's current state — names its hash in
// attribute 11000. The clean-up lists the stored files first, then the
// references, and removes the files that are neither referenced nor younger
// than MinAge (with their thumbnails): a client uploads a file before it
// creates the object naming it, and MinAge is the time it has for that.
// It also removes abandoned temporary uploads (ExpireUploads).

// DefaultCleanupMinAge is the default CleanupOptions.MinAge.
const DefaultCleanupMinAge = 24 * time.Hour

// AttrFileHash is the attribute of a binary proxy object holding the MD5
// of its file.
const AttrFileHash = 11000

// ErrInvalidCleanup is a clean-up request the rules refuse (400).
var ErrInvalidCleanup = errkind.New(errkind.Invalid, "invalid clean-up")

// referencePage is how many objects a reference scan reads at once.
const referencePage = 1000

// CleanupOptions configure one clean-up.
type CleanupOptions struct {
	// MinAge keeps files stored less than this long ago even when nothing
	// references them (DefaultCleanupMinAge is the callers' default);
	// negative is refused.
	MinAge time.Duration
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Progress, when set, is called with the files examined so far.
	Progress func(done, total int64)
}

// CleanupResult says what a clean-up found and did.
type CleanupResult struct {
	Files        int   // stored files examined
	Referenced   int   // kept: named by a binary proxy object
	Young        int   // kept: unreferenced but younger than MinAge
	Removed      int   // removed (or, in a dry run, that would be)
	RemovedBytes int64 // their size
	Uploads      int   // abandoned temporary uploads removed (not in a dry run)
}

// References returns the set of content hashes binary proxy objects of the
// store name, on every branch, live or deleted.
func References(ctx context.Context, st store.Reader) (map[[16]byte]bool, error) {
	branches := []int64{content.BranchDefault}
	if err := eachPage(ctx, st, content.BranchDefault, []int64{content.TypeBranch}, func(objs []store.Object) error {
		for _, o := range objs {
			if o.ID != content.BranchDefault {
				branches = append(branches, o.ID)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	refs := map[[16]byte]bool{}
	for _, b := range branches {
		err := eachPage(ctx, st, b, nil, func(objs []store.Object) error {
			ids := make([]int64, len(objs))
			for i, o := range objs {
				ids[i] = o.ID
			}
			vals, err := st.ListValues(ctx, b, ids, store.ValueFilter{AttributeIDs: []int64{AttrFileHash}})
			if err != nil {
				return err
			}
			for _, v := range vals {
				var h string
				if json.Unmarshal(v.JSON, &h) != nil {
					continue
				}
				if sum, err := ParseMD5(h); err == nil {
					refs[sum] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// eachPage pages through the object rows (live and deleted) of a branch.
func eachPage(ctx context.Context, st store.Reader, branch int64, types []int64, fn func([]store.Object) error) error {
	var after int64
	for {
		objs, err := st.ListObjects(ctx, branch, store.ObjectQuery{TypeIDs: types, AfterID: after, Limit: referencePage})
		if err != nil || len(objs) == 0 {
			return err
		}
		if err := fn(objs); err != nil {
			return err
		}
		after = objs[len(objs)-1].ID
	}
}

// Cleanup removes stored files no binary proxy object references (see
// above); references loads the referenced hashes (References over the
// store) after the stored files have been listed.
func (s *Service) Cleanup(ctx context.Context, references func(context.Context) (map[[16]byte]bool, error), o CleanupOptions) (CleanupResult, error) {
	var res CleanupResult
	if o.MinAge < 0 {
		return res, fmt.Errorf("%w: min age %s is negative", ErrInvalidCleanup, o.MinAge)
	}
	var stored []blobs.Info
	err := s.blobs.Walk(ctx, "files/", func(info blobs.Info) error {
		stored = append(stored, info)
		return nil
	})
	if err != nil {
		return res, err
	}
	refs, err := references(ctx)
	if err != nil {
		return res, err
	}
	cutoff := s.opts.Now().Add(-o.MinAge)
	total := int64(len(stored))
	for i, info := range stored {
		res.Files++
		var sum [16]byte
		if b, err := hex.DecodeString(strings.TrimPrefix(info.Key, "files/")); err == nil && len(b) == 16 {
			copy(sum[:], b)
		} else {
			continue // not a content blob: left alone
		}
		switch {
		case refs[sum]:
			res.Referenced++
		case info.Modified.After(cutoff):
			res.Young++
		default:
			res.Removed++
			res.RemovedBytes += info.Size
			if !o.DryRun {
				if err := s.removeContent(ctx, sum); err != nil {
					return res, err
				}
				s.opts.Logger.Info("removed unreferenced file", "hash", hex.EncodeToString(sum[:]), "bytes", info.Size)
			}
		}
		if o.Progress != nil {
			o.Progress(int64(i+1), total)
		}
	}
	if !o.DryRun {
		if res.Uploads, err = s.ExpireUploads(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// removeContent deletes a content blob and its thumbnails.
func (s *Service) removeContent(ctx context.Context, sum [16]byte) error {
	var thumbs []string
	err := s.blobs.Walk(ctx, "thumbnails/"+hex.EncodeToString(sum[:])+"/", func(info blobs.Info) error {
		thumbs = append(thumbs, info.Key)
		return nil
	})
	if err != nil && !errors.Is(err, blobs.ErrNotFound) {
		return err
	}
	for _, k := range thumbs {
		if err := s.blobs.Delete(ctx, k); err != nil {
			return err
		}
	}
	return s.blobs.Delete(ctx, contentKey(sum))
}
