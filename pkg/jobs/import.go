package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

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

func importJSON(ctx context.Context, t *Task) error {
	batch, err := importBatchSize(t)
	if err != nil {
		return err
	}
	in, err := t.OpenInput(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(in, 64<<10))
	if err := openObjectArray(dec); err != nil {
		return err
	}
	branch := strconv.FormatInt(t.Job.Branch, 10)
	ch := content.Change{User: t.Job.User, Comment: fmt.Sprintf("job %d: import", t.Job.ID)}
	var creates, updates []content.ObjectInput
	created, updated := 0, 0
	flush := func() error {
		if len(creates) > 0 {
			_, ids, err := t.svc.content.CreateObjects(ctx, branch, ch, creates)
			if err != nil {
				return fmt.Errorf("objects %d to %d: %w", created+updated+1, created+updated+len(creates), err)
			}
			created += len(ids)
		}
		if len(updates) > 0 {
			if _, err := t.svc.content.UpdateObjects(ctx, branch, ch, updates); err != nil {
				return fmt.Errorf("objects %d to %d: %w", created+updated+1, created+updated+len(updates), err)
			}
			updated += len(updates)
		}
		creates, updates = creates[:0], updates[:0]
		t.setInfo(fmt.Sprintf("%d objects created, %d updated", created, updated))
		return nil
	}
	for dec.More() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var w wireObject
		if err := dec.Decode(&w); err != nil {
			return invalidf("job input: object %d: %v", created+updated+len(creates)+len(updates)+1, err)
		}
		if w.Meta.ID > 0 {
			updates = append(updates, w.input())
		} else {
			creates = append(creates, w.input())
		}
		if len(creates)+len(updates) >= batch {
			if err := flush(); err != nil {
				t.Logf("import stopped after %d created and %d updated objects", created, updated)
				return err
			}
		}
	}
	if err := flush(); err != nil {
		t.Logf("import stopped after %d created and %d updated objects", created, updated)
		return err
	}
	t.Logf("imported: %d objects created, %d updated", created, updated)
	return nil
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
