package jobs

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cmsplatform/cms/pkg/indexwriter"
)

// ReindexKind returns the jobReindex kind over an index writer: what
// `cms reindex` does. Without parameter "branch" every branch is rebuilt
// into a new index and the alias switched; with it, that branch and its
// descendants are rebuilt in place.
func ReindexKind(ix *indexwriter.Indexer, head indexwriter.Head) KindFunc {
	return func(ctx context.Context, t *Task) error {
		// The log says how far it got at each tenth of the documents.
		tenth := int64(0)
		progress := func(p indexwriter.Progress) {
			if p.Total > 0 {
				t.SetProgress(float64(p.Done)/float64(p.Total), fmt.Sprintf("%d of %d documents", p.Done, p.Total))
				if now := p.Done * 10 / p.Total; now > tenth && p.Done < p.Total {
					tenth = now
					t.Logf("%d of %d documents indexed", p.Done, p.Total)
				}
			}
		}
		if b := t.Job.Param("branch"); len(b) > 0 {
			branch, err := strconv.ParseInt(b[0], 10, 64)
			if err != nil || branch < 1 {
				return invalidf("parameter branch %q: want a branch id", b[0])
			}
			res, err := ix.RebuildBranch(ctx, branch, head, progress)
			if err != nil {
				return err
			}
			t.Logf("reindexed branch %d and %d descendants: %d documents at version %d", branch, res.Branches-1, res.Documents, res.Version)
			return nil
		}
		res, err := ix.Rebuild(ctx, head, progress)
		if err != nil {
			return err
		}
		t.Logf("reindexed %d branches into %s: %d documents at version %d", res.Branches, res.Index, res.Documents, res.Version)
		return nil
	}
}
