package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"

	"strconv"

	"github.com/cmsplatform/cms/pkg/content"
)

// Import batch sizes (parameter "batchSize").
const (
	defaultImportBatch = 500
	maxImportBatch     = 5000
)

func importBatchSize(t *Task) (int, error) {
	v := t.Job.Param("batchSize")
	if len(v) == 0 {
		return defaultImportBatch, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 1 || n > maxImportBatch {
		return 0, invalidf("parameter batchSize %q: want 1 to %d", v[0], maxImportBatch)
	}
	return n, nil
}

// importJSON creates and updates the objects of the job input in
// transactions of at most batchSize objects. Each transaction holds one run
// of consecutive creates or updates and records the job's checkpoint (how
// many input objects are done), so a runner that takes the job over after
// a crash skips exactly what was committed: nothing is written twice.
func importJSON(ctx context.Context, t *Task) error {
	batch, err := importBatchSize(t)
	if err != nil {
		return err
	}
	in, size, err := t.openInput(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	// The progress is the share of the input read (the decoder reads at most
	// 64 KiB ahead of what is committed).
	read := &countingReader{r: in}
	dec := json.NewDecoder(bufio.NewReaderSize(read, 64<<10))
	if err := openObjectArray(dec); err != nil {
		return err
	}
	var cp Checkpoint
	if t.Job.Checkpoint != nil {
		cp = *t.Job.Checkpoint
		t.Logf("resuming after %d input objects (%d created, %d updated before)", cp.Consumed, cp.Created, cp.Updated)
	}
	branch := strconv.FormatInt(t.Job.Branch, 10)
	comment := fmt.Sprintf("job %d: import", t.Job.ID)
	var pending []content.ObjectInput
	creating := false
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		next := cp
		next.Consumed += len(pending)
		if creating {
			next.Created += len(pending)
		} else {
			next.Updated += len(pending)
		}
		ch := content.Change{Caller: &auth.Principal{Name: t.Job.User}, Comment: comment, InTx: t.Checkpointed(next)}
		var err error
		if creating {
			_, _, err = t.svc.content.CreateObjects(ctx, branch, ch, pending)
		} else {
			_, err = t.svc.content.UpdateObjects(ctx, branch, ch, pending)
		}
		if err != nil {
			return fmt.Errorf("objects %d to %d: %w", cp.Consumed+1, next.Consumed, err)
		}
		cp, pending = next, pending[:0]
		info := fmt.Sprintf("%d objects created, %d updated", cp.Created, cp.Updated)
		if size > 0 {
			t.SetProgress(float64(read.n)/float64(size), info)
		} else {
			t.setInfo(info)
		}
		t.Logf("%s", info)
		return nil
	}
	for seen := 0; dec.More(); seen++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var w wireObject
		if err := dec.Decode(&w); err != nil {
			return invalidf("job input: object %d: %v", seen+1, err)
		}
		if seen < cp.Consumed {
			continue // committed by an earlier run of this job
		}
		if update := w.Meta.ID > 0; len(pending) > 0 && update == creating {
			if err := flush(); err != nil {
				return stopped(t, cp, err)
			}
		}
		creating = w.Meta.ID <= 0
		pending = append(pending, w.input())
		if len(pending) >= batch {
			if err := flush(); err != nil {
				return stopped(t, cp, err)
			}
		}
	}
	if err := flush(); err != nil {
		return stopped(t, cp, err)
	}
	t.Logf("imported: %d objects created, %d updated", cp.Created, cp.Updated)
	return nil
}

func stopped(t *Task, cp Checkpoint, err error) error {
	t.Logf("import stopped after %d created and %d updated objects", cp.Created, cp.Updated)
	return err
}

// openObjectArray reads the decoder up to the first element of the object
// array: a bare array, or the "objects" member of an object.
func openObjectArray(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return invalidf("job input is no JSON: %v", err)
	}
	if tok == json.Delim('[') {
		return nil
	}
	if tok != json.Delim('{') {
		return invalidf(`job input: want {"objects": [...]} or an array of objects`)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return invalidf("job input: %v", err)
		}
		if key == "objects" {
			tok, err := dec.Token()
			if err != nil || tok != json.Delim('[') {
				return invalidf(`job input: "objects" must be an array`)
			}
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return invalidf("job input: %v", err)
		}
	}
	return invalidf(`job input: no "objects" array`)
}
