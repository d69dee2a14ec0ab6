package jobs

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/content"
)

// The built-in kinds. Parameters (CreateJobRequest.parameters, after the
// definition's defaults):
//
//   - jobExportJson / jobExportCsv: the job's objIds, else parameter
//     "type" (a type id or ApiIdentifier): every object of it on the
//     job's branch, inherited values included. JSON writes the artifact
//     objects.json as {"objects": [CmsObject…]}, the body of a create or
//     update request, so jobImportJson reads it back; CSV writes
//     objects.csv with one row per value: id, guid, apiIdentifier,
//     typeRef, attribute, language, variant, sortReverse, value (the
//     value's JSON text, strings unquoted). Both are streamed.
//   - jobImportJson: reads the job input, {"objects": [...]} or a bare
//     array, streamed; objects with meta.id are updated, the others
//     created, in transactions of parameter "batchSize" objects (default
//     500, at most 5,000). A failing batch fails the job; the batches
//     before it stay written (the log says how far it got).
//   - jobReindex: what `cms reindex` does (parameter "branch": that
//     branch and its descendants in place), where the runner's process
//     has the search engine (ReindexKind).
//   - jobCleanupFiles: what `cms files cleanup` does (CleanupFilesKind),
//     where the runner's process has the blob component; without it the
//     job fails saying so.
func builtinKinds() map[string]KindFunc {
	return map[string]KindFunc{
		KindExportJSON:     exportJSON,
		KindExportCSV:      exportCSV,
		KindImportJSON:     importJSON,
		KindPromoteRelease: promoteRelease,
		KindCleanupFiles: func(context.Context, *Task) error {
			return fmt.Errorf("%w: removing unreferenced files needs the blob component, which this runner does not have", ErrUnsupported)
		},
	}
}

// exportBatch is how many objects an export reads at once.
const exportBatch = 500

// eachExported calls fn for every object the export job selects. User
// objects (type 110: login names and grants) are never exported: a job
// reads as a trusted internal reader, and only administrators may see
// them.
func eachExported(ctx context.Context, t *Task, fn func(content.Object) error) (int, error) {
	c := t.svc.content
	branch := strconv.FormatInt(t.Job.Branch, 10)
	opts := content.ReadOptions{Inherited: true}
	n := 0
	if ids := t.Job.Objects; len(ids) > 0 {
		for i := 0; i < len(ids); i += exportBatch {
			part := ids[i:min(len(ids), i+exportBatch)]
			idents := make([]string, len(part))
			for k, id := range part {
				idents[k] = strconv.FormatInt(id, 10)
			}
			objs, err := c.GetObjects(ctx, branch, idents, opts)
			if err != nil {
				return n, err
			}
			for _, o := range objs {
				if o.TypeID == content.TypeUser {
					continue
				}
				if err := fn(o); err != nil {
					return n, err
				}
				n++
			}
			t.SetProgress(float64(n)/float64(len(ids)), fmt.Sprintf("%d of %d objects exported", n, len(ids)))
			t.Logf("%d of %d objects exported", n, len(ids))
		}
		return n, nil
	}
	typ := t.Job.Param("type")
	if len(typ) != 1 || strings.TrimSpace(typ[0]) == "" {
		return 0, invalidf("an export needs objIds or one parameter \"type\"")
	}
	q := content.ListQuery{ReadOptions: opts, Take: content.MaxTake}
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		page, err := c.GetTypedObjects(ctx, branch, typ[0], q)
		if err != nil {
			return n, err
		}
		for _, o := range page.Objects {
			if o.TypeID == content.TypeUser {
				continue
			}
			if err := fn(o); err != nil {
				return n, err
			}
			n++
		}
		t.setInfo(fmt.Sprintf("%d objects exported", n))
		t.Logf("%d objects exported", n)
		if page.Continue == "" {
			return n, nil
		}
		q.Continue = page.Continue
	}
}

func exportJSON(ctx context.Context, t *Task) error {
	var n int
	err := t.WriteArtifact(ctx, "objects.json", "application/json", func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		if _, err := bw.WriteString(`{"objects":[`); err != nil {
			return err
		}
		var err error
		n, err = eachExported(ctx, t, func(o content.Object) error {
			if n > 0 {
				if err := bw.WriteByte(','); err != nil {
					return err
				}
			}
			b, err := json.Marshal(toWire(o))
			if err != nil {
				return err
			}
			n++
			_, err = bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("]}\n"); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err == nil {
		t.Logf("exported %d objects to objects.json", n)
	}
	return err
}

// csvHeader is the first row of objects.csv.
var csvHeader = []string{"id", "guid", "apiIdentifier", "typeRef", "attribute", "language", "variant", "sortReverse", "value"}

func exportCSV(ctx context.Context, t *Task) error {
	var n int
	err := t.WriteArtifact(ctx, "objects.csv", "text/csv; charset=utf-8", func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(csvHeader); err != nil {
			return err
		}
		var err error
		n, err = eachExported(ctx, t, func(o content.Object) error {
			id, typ := strconv.FormatInt(o.ID, 10), strconv.FormatInt(o.TypeID, 10)
			if len(o.Values) == 0 {
				return cw.Write([]string{id, o.GUID, o.APIIdentifier, typ, "", "", "", "", ""})
			}
			for _, v := range o.Values {
				row := []string{id, o.GUID, o.APIIdentifier, typ, strconv.FormatInt(v.Attribute, 10),
					strconv.FormatInt(v.Language, 10), strconv.FormatInt(v.Variant, 10),
					strconv.FormatInt(v.SortReverse, 10), csvValue(v.JSON)}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
	if err == nil {
		t.Logf("exported %d objects to objects.csv", n)
	}
	return err
}

// csvValue is a value's JSON text, a string without its quotes.
func csvValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
