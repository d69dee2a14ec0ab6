package jobs

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/files"
	"github.com/cmsplatform/cms/pkg/store"
)

// DefaultCleanupMinAge is the default floor of CleanupFilesKind: the
// smallest minAge a jobCleanupFiles job accepts (the setting
// jobCleanupMinAge; the operator's `cms files cleanup --min-age` may go
// lower).
const DefaultCleanupMinAge = time.Hour

// CleanupFilesKind returns the jobCleanupFiles kind: what
// `cms files cleanup` does (files.Service.Cleanup over the references in
// st). Parameters: "minAge" (a Go duration, default 24h: unreferenced files
// stored more recently are kept; at least floor, so that no job removes an
// upload whose object is still being written) and "dryRun"
// ("true": report only).
func CleanupFilesKind(svc *files.Service, st store.Reader, floor time.Duration) KindFunc {
	return func(ctx context.Context, t *Task) error {
		o := files.CleanupOptions{MinAge: files.DefaultCleanupMinAge}
		if v := t.Job.Param("minAge"); len(v) > 0 {
			d, err := time.ParseDuration(v[0])
			if err != nil || d < 0 {
				return invalidf("parameter minAge %q: want a duration such as 24h", v[0])
			}
			if d < floor {
				return invalidf("parameter minAge %q: at least %s (jobCleanupMinAge: a younger unreferenced file may be an upload whose object is not written yet)", v[0], floor)
			}
			o.MinAge = d
		}
		if v := t.Job.Param("dryRun"); len(v) > 0 {
			dry, err := strconv.ParseBool(v[0])
			if err != nil {
				return invalidf("parameter dryRun %q: want true or false", v[0])
			}
			o.DryRun = dry
		}
		o.Progress = func(done, total int64) {
			t.SetProgress(float64(done)/float64(total), fmt.Sprintf("%d of %d files examined", done, total))
		}
		res, err := svc.Cleanup(ctx, func(ctx context.Context) (map[[16]byte]bool, error) { return files.References(ctx, st) }, o)
		if err != nil {
			return err
		}
		verb := "removed"
		if o.DryRun {
			verb = "would remove"
		}
		t.Logf("%d files: %d referenced, %d younger than %s; %s %d unreferenced (%d bytes); %d abandoned uploads removed",
			res.Files, res.Referenced, res.Young, o.MinAge, verb, res.Removed, res.RemovedBytes, res.Uploads)
		return nil
	}
}
