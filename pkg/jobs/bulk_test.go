package jobs_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/jobs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// uploadInput uploads data as a job input in chunks of size chunk.
func (e *env) uploadInput(t *testing.T, data []byte, chunk int) string {
	t.Helper()
	token, size, err := e.svc.StartInput(bg, bytes.NewReader(data[:min(chunk, len(data))]))
	if err != nil {
		t.Fatal(err)
	}
	for off := chunk; off < len(data); off += chunk {
		if size, err = e.svc.ContinueInput(bg, token, bytes.NewReader(data[off:min(off+chunk, len(data))])); err != nil {
			t.Fatal(err)
		}
	}
	if size != int64(len(data)) {
		t.Fatalf("input size %d, want %d", size, len(data))
	}
	return token
}

// TestImportExport10k imports 10,000 objects from a job input uploaded
// in chunks, exports them as JSON and as CSV, and checks both artifacts
// through the ZIP.
func TestImportExport10k(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 10,000 objects")
	}
	const n = 10000
	setups(t, func(t *testing.T, e *env) {
		e.runner(t, "bulk", nil)
		_, typ, err := e.content.CreateObjects(bg, "4", content.Change{Caller: &auth.Principal{Name: "editor"}},
			[]content.ObjectInput{{TypeID: content.RootID, APIIdentifier: ptr("item")}})
		if err != nil {
			t.Fatal(err)
		}
		token := e.uploadInput(t, testenv.ImportInputBytes(n, typ[0]), 256<<10)
		imp := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindImportJSON), Input: &jobs.InputFile{Token: token},
			Parameters: []jobs.Parameter{{Name: "batchSize", Values: []string{"1000"}}}})
		j := e.waitDone(t, imp.ID)
		if j.State != jobs.StateSucceeded {
			t.Fatalf("import: %d %q", j.State, j.StateMessage)
		}
		// The log says how far the import got after each batch.
		lg, err := e.svc.OpenLog(bg, j)
		if log := string(readAll(t, lg, err)); !strings.Contains(log, " 1000 objects created, 0 updated\n") || !strings.Contains(log, " 5000 objects created, 0 updated\n") {
			t.Fatalf("import log: %q", log)
		}
		typeParam := []jobs.Parameter{{Name: "type", Values: []string{"item"}}}
		ej := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindExportJSON), Parameters: typeParam})
		ec := e.create(t, jobs.CreateRequest{Definition: e.def(t, jobs.KindExportCSV), Parameters: typeParam})
		for _, id := range []int64{ej.ID, ec.ID} {
			if j := e.waitDone(t, id); j.State != jobs.StateSucceeded {
				t.Fatalf("export %d: %d %q", id, j.State, j.StateMessage)
			}
		}
		files := map[string][]byte{}
		for _, id := range []int64{ej.ID, ec.ID} {
			j, _ := e.svc.Get(bg, id)
			var z bytes.Buffer
			if err := e.svc.WriteZip(bg, j, &z); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(z.Bytes()), int64(z.Len()))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, err := f.Open()
				files[f.Name] = readAll(t, rc, err)
			}
		}
		var doc struct {
			Objects []struct {
				Meta   struct{ ID, TypeRef int64 }
				Values []struct{ Value string }
			}
		}
		if err := json.Unmarshal(files["objects.json"], &doc); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, o := range doc.Objects {
			if o.Meta.TypeRef != typ[0] || len(o.Values) != 1 {
				t.Fatalf("exported object %+v", o)
			}
			seen[o.Values[0].Value] = true
		}
		if len(doc.Objects) != n || len(seen) != n || !seen["item 0"] || !seen[fmt.Sprintf("item %d", n-1)] {
			t.Fatalf("objects.json: %d objects, %d distinct names", len(doc.Objects), len(seen))
		}
		rows, err := csv.NewReader(bufio.NewReader(bytes.NewReader(files["objects.csv"]))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n+1 || strings.Join(rows[0], ",") != "id,guid,apiIdentifier,typeRef,attribute,language,variant,sortReverse,value" ||
			rows[1][8] != "item 0" {
			t.Fatalf("objects.csv: %d rows, first %v %v", len(rows), rows[0], rows[1])
		}
	})
}

// TestInputLimit: a job input beyond its limit is ErrInputTooLarge (422)
// and keeps
// what it had; a continued upload of an unknown token is ErrInvalid.
func TestInputLimit(t *testing.T) {
	e := embedded(t)
	lim := e.svc.Limits().MaxInputBytes
	token, _, err := e.svc.StartInput(bg, strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ContinueInput(bg, token, io.LimitReader(zeros{}, lim)); !errors.Is(err, jobs.ErrInputTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if size, err := e.svc.ContinueInput(bg, token, strings.NewReader("d")); err != nil || size != 4 {
		t.Fatalf("after a refused chunk: %d %v", size, err)
	}
	if _, err := e.svc.ContinueInput(bg, strings.Repeat("f", 32), strings.NewReader("x")); err == nil {
		t.Fatal("unknown token accepted")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func ptr[T any](v T) *T { return &v }
